"""OffsetCommit (8), v0-7: store committed offsets; answered once they are on the log.

Generation -1 with a group that has no members is a simple commit (``assign()`` consumers);
v0 carries no generation, so it is always one. v1's per-partition ``commit_timestamp`` (a
legacy expiry base) is ignored: the offset expires as any other.
``retention_time_ms`` (v2-4; -1 = the broker's ``offsets.retention.minutes``) sets an explicit
expiry; v5+ has none. ``committed_leader_epoch`` exists from v6 (-1 before). A partition of
a topic that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION and not stored (Kafka).
Metadata longer than ``offset.metadata.max.bytes`` is OFFSET_METADATA_TOO_LARGE for that
partition; a commit too large for ``__consumer_offsets`` (its ``segment.bytes`` or
``max.message.bytes``) is INVALID_COMMIT_OFFSET_SIZE, nothing stored (group/commits.py).
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.topic_partition import TopicPartition

API_KEY = 8


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    offsets: dict[TopicPartition, tuple[int, int, str | None]] = {}
    unknown: dict[TopicPartition, int] = {}
    group_ok = ctx.authorize(AclOperation.READ, ResourceType.GROUP, request["group_id"])
    for topic in request.get("topics") or []:
        meta = ctx.broker.coordinator.get_topic(topic["name"])
        topic_ok = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic["name"])
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            if not (group_ok and topic_ok):
                unknown[tp] = (
                    errors.TopicAuthorizationFailedError.errno
                    if group_ok
                    else errors.GroupAuthorizationFailedError.errno
                )
                continue
            if meta is None or not meta.has_partition(tp.partition):
                unknown[tp] = errors.UnknownTopicOrPartitionError.errno
                continue
            offsets[tp] = (
                p["committed_offset"],
                p.get("committed_leader_epoch", -1),
                p.get("committed_metadata"),
            )
    codes: dict[TopicPartition, int]
    if coordinator is None:
        codes = dict.fromkeys(offsets, errors.CoordinatorNotAvailableError.errno)
    elif not offsets:
        codes = {}
    else:
        generation = request.get("generation_id_or_member_epoch", request.get("generation_id", -1))
        codes = await coordinator.commit_offsets(
            request["group_id"],
            generation,
            request.get("member_id") or "",
            request.get("group_instance_id"),
            request.get("retention_time_ms", -1),
            offsets,
        )
    by_topic: dict[str, list[dict[str, int]]] = {}
    for tp, code in (codes | unknown).items():
        by_topic.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "error_code": code}
        )
    return {
        "throttle_time_ms": 0,
        "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
    }
