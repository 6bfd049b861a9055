"""OffsetDelete (47), v0: delete a group's committed offsets of some partitions.

Used by ``kafka-consumer-groups.sh --delete-offsets``, Java's
``Admin.deleteConsumerGroupOffsets`` and kafka-python's ``delete_group_offsets``. The group
coordinator appends one batch of offset tombstones (offset commit key, null value) to the
group's partition of ``__consumer_offsets`` and answers once it is appended, so an
acknowledged deletion survives a restart or a crash; semantics in
:meth:`~tiered_mq.broker.group.coordinator.GroupCoordinator.delete_offsets`.

Errors, as Kafka's KafkaApis and GroupCoordinator answer them. Top level (no partitions in the
response then): GROUP_AUTHORIZATION_FAILED without DELETE on the group, INVALID_GROUP_ID,
GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a non-consumer group with members),
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (also when the append fails). Per
partition: TOPIC_AUTHORIZATION_FAILED without READ on the topic, UNKNOWN_TOPIC_OR_PARTITION
for a topic or partition that does not exist, GROUP_SUBSCRIBED_TO_TOPIC while a member of the
group subscribes to the topic. A partition that exists but has no committed offset succeeds.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.OFFSET_DELETE


def _answer(error_code: int, codes: dict[TopicPartition, int]) -> dict[str, Any]:
    by_topic: dict[str, list[dict[str, int]]] = {}
    for tp, code in codes.items():
        by_topic.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "error_code": code}
        )
    return {
        "error_code": error_code,
        "throttle_time_ms": 0,
        "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
    }


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    group_id: str = request["group_id"]
    if coordinator is None:
        return _answer(errors.CoordinatorNotAvailableError.errno, {})
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, group_id):
        return _answer(errors.GroupAuthorizationFailedError.errno, {})
    requested: list[TopicPartition] = []
    refused: dict[TopicPartition, int] = {}
    partitions: list[TopicPartition] = []
    for topic in request.get("topics") or []:
        name = topic["name"]
        meta = ctx.broker.coordinator.get_topic(name)
        topic_ok = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name)
        for p in topic["partitions"]:
            tp = TopicPartition(name, p["partition_index"])
            requested.append(tp)
            if not topic_ok:
                refused[tp] = errors.TopicAuthorizationFailedError.errno
            elif meta is None or not meta.has_partition(tp.partition):
                refused[tp] = errors.UnknownTopicOrPartitionError.errno
            else:
                partitions.append(tp)
    group_error, codes = await coordinator.delete_offsets(group_id, partitions)
    if group_error:
        return _answer(group_error, {})
    codes |= refused
    return _answer(0, {tp: codes[tp] for tp in requested})
