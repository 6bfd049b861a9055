"""DeleteTopics (20), v1-3: removes the topic from the coordinator, then its partitions'
logs (and, when the cold tier is wired, its objects). Unknown topics answer
UNKNOWN_TOPIC_OR_PARTITION; internal topics cannot be deleted (INVALID_REQUEST). With the
broker's ``delete.topic.enable=false`` nothing is deleted and every topic answers
TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3), as Kafka's controller does. A name given
more than once is answered once, INVALID_REQUEST, and not deleted. The topics that pass these
checks are deleted together: one coordinator write for the request (topic_registry.py), each
topic answered on its own.

As in Kafka (LogManager.asyncDelete), each local partition directory is renamed
``<topic>-<partition>.<uniqueId>-delete`` (durably) before the topic is answered NONE, and
removed in the background; a removal that fails leaves nothing a topic created again under the
same name could read, and the broker removes what is left at its next start. Only a failed
rename answers KAFKA_STORAGE_ERROR (the topic's metadata is gone by then); the directory it
leaves under its own name, like one a crash before the rename leaves, is a stray that the broker
removes at its next start (its ``partition.metadata`` names the deleted topic's id, so a topic
created again under the name never opens it: broker/stray_partitions.py)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import (
    DUPLICATE_TOPIC,
    error_code,
    once_each,
    require_topic,
)
from tiered_mq.broker.topic_names import is_internal
from tiered_mq.errors import InvalidRequestError, TopicDeletionDisabledError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DELETE_TOPICS
DELETION_DISABLED_MIN_VERSION = 3  # DeleteTopics v3 brought TOPIC_DELETION_DISABLED


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    if not ctx.broker.config.get_bool("delete.topic.enable", True):
        disabled = TopicDeletionDisabledError
        if ctx.api_version < DELETION_DISABLED_MIN_VERSION:
            disabled = InvalidRequestError
        return {
            "throttle_time_ms": 0,
            "responses": [
                {"name": name, "error_code": disabled.errno} for name in request["topic_names"]
            ],
        }
    responses: list[dict[str, Any]] = []
    asked: dict[str, dict[str, Any]] = {}
    for name, duplicate in once_each(request["topic_names"], str):
        response = {"name": name, "error_code": 0}
        responses.append(response)
        try:
            if duplicate:
                raise InvalidRequestError(DUPLICATE_TOPIC)
            require_topic(ctx, AclOperation.DELETE, name)
            if is_internal(name):
                raise InvalidRequestError(f"internal topic '{name}' cannot be deleted")
            asked[name] = response
        except Exception as e:
            response["error_code"] = error_code(e)
    errors = await ctx.broker.topic_registry.delete_topics(list(asked))
    for name, response in asked.items():
        error = errors[name]
        if error is not None:
            response["error_code"] = error_code(error)
    return {"throttle_time_ms": 0, "responses": responses}
