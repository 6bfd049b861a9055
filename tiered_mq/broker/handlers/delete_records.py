"""DeleteRecords (21), v0-1: advance a partition's log start offset.

An internal topic (``__consumer_offsets``, ``__transaction_state``) answers
INVALID_TOPIC_EXCEPTION, as Kafka's ``ReplicaManager.deleteRecordsOnLocalLog`` ("Cannot delete
records of internal topic ..."). A partition whose ``cleanup.policy`` lacks ``delete``
(``compact`` alone, or an empty policy) answers POLICY_VIOLATION and keeps its records, as Kafka's
``Partition.deleteRecordsOnLeader`` ("Records of partition ... can not be deleted due to the
configured policy"); ``compact,delete`` is accepted. ``offset`` -1 means the high watermark.
An offset above the high watermark or below 0 answers OFFSET_OUT_OF_RANGE. Segments wholly
below the new log start offset are deleted by local retention; reads below it answer
OFFSET_OUT_OF_RANGE at once. A partition named twice is answered once, with its last offset.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.broker.topic_names import is_internal
from tiered_mq.errors import InvalidTopicError, OffsetOutOfRangeError, PolicyViolationError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.DELETE_RECORDS


async def _delete(ctx: RequestContext, tp: TopicPartition, offset: int) -> int:
    if is_internal(tp.topic):
        raise InvalidTopicError(f"Cannot delete records of internal topic {tp.topic}")
    partition = ctx.broker.replica_manager.get_partition(tp)
    if not partition.log.config.delete:
        raise PolicyViolationError(
            f"Records of partition {tp} can not be deleted due to the configured policy"
        )
    hwm = partition.high_watermark
    if offset == -1:
        offset = hwm
    if offset < 0 or offset > hwm:
        raise OffsetOutOfRangeError(f"offset {offset} outside [0, {hwm}]")
    async with partition.lock:
        if offset > partition.log_start_offset:
            partition.log.set_log_start_offset(offset)
    return partition.log_start_offset


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    """One answer per partition, as Kafka's ``KafkaApis.handleDeleteRecordsRequest`` keys them
    by TopicPartition: a partition named more than once (in one topic entry or in two entries
    of its topic) is acted on once, with the offset of its last mention, and answered once;
    topics are answered in the order they were first named, each with its partitions."""
    offsets: dict[TopicPartition, int] = {}
    for t in request["topics"]:
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            offsets[tp] = p["offset"]  # the last mention's offset, at the first one's place
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp in offsets:
        entry: dict[str, Any] = {"partition_index": tp.partition, "error_code": 0}
        try:
            require_topic(ctx, AclOperation.DELETE, tp.topic)
            entry["low_watermark"] = await _delete(ctx, tp, offsets[tp])
        except Exception as e:
            entry.update(error_code=error_code(e), low_watermark=-1)
        topics.setdefault(tp.topic, []).append(entry)
    return {
        "throttle_time_ms": 0,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
    }
