"""DeleteTopics (20), v1-3: removes the topic from the coordinator, then its partitions'
logs (and, when the cold tier is wired, its objects). Unknown topics answer
UNKNOWN_TOPIC_OR_PARTITION; internal topics cannot be deleted (INVALID_REQUEST)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.broker.topic_names import is_internal
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DELETE_TOPICS


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    responses = []
    for name in request["topic_names"]:
        code = 0
        try:
            require_topic(ctx, AclOperation.DELETE, name)
            if is_internal(name):
                raise InvalidRequestError(f"internal topic '{name}' cannot be deleted")
            await ctx.broker.topic_registry.delete_topic(name)
        except Exception as e:
            code = error_code(e)
        responses.append({"name": name, "error_code": code})
    return {"throttle_time_ms": 0, "responses": responses}
