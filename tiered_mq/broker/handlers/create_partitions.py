"""CreatePartitions (37), v0-1: raises a topic's partition count (never lowers it).

Explicit assignments give one replica list per new partition, checked as Kafka checks them
(INVALID_REPLICA_ASSIGNMENT; ``TopicRegistry.create_partitions``); ``validate_only`` changes
nothing. A topic named more than once is answered once, INVALID_REQUEST "Duplicate topic
name.", and not grown. An unknown topic is UNKNOWN_TOPIC_OR_PARTITION with a null message, as
Kafka's controller answers it.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import (
    DUPLICATE_TOPIC,
    api_error_message,
    error_code,
    once_each,
    require_topic,
    topic_name,
)
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.CREATE_PARTITIONS


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))
    async with ctx.broker.topic_registry.manifest_writes():  # one wait for every topic.json
        results = [
            await _grow(ctx, t, duplicate, validate_only)
            for t, duplicate in once_each(request["topics"], topic_name)
        ]
    return {"throttle_time_ms": 0, "results": results}


async def _grow(
    ctx: RequestContext, t: dict[str, Any], duplicate: bool, validate_only: bool
) -> dict[str, Any]:
    """One topic of the request, answered on its own."""
    result: dict[str, Any] = {"name": t["name"], "error_code": 0, "error_message": None}
    try:
        if duplicate:
            raise InvalidRequestError(DUPLICATE_TOPIC)
        require_topic(ctx, AclOperation.ALTER, t["name"])
        assignments = t.get("assignments")
        await ctx.broker.topic_registry.create_partitions(
            t["name"],
            t["count"],
            validate_only,
            None if assignments is None else [list(a["broker_ids"]) for a in assignments],
        )
    except Exception as e:
        result["error_code"] = error_code(e)
        result["error_message"] = api_error_message(e)
    return result
