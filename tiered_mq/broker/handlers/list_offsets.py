"""ListOffsets (2), v1-10: earliest (-2), latest (-1), max timestamp (-3) and by timestamp.

- ``-2``: the log start offset; ``-1``: the high watermark (the last stable offset for
  read_committed); both answer timestamp -1.
- ``t >= 0``: the first offset at or above the log start offset whose record timestamp is
  >= t, through the time index (``LocalLog.offset_for_timestamp``; records DeleteRecords left
  below the log start are skipped); none -> offset -1 and timestamp -1, as Kafka does.
- ``-3`` (KIP-734): the first record carrying the partition's greatest timestamp, with that
  timestamp; an empty partition answers -1 / -1.
Offsets at or above the high watermark (LSO) are never returned.
With the cold tier: ``-2`` includes the bucket (the log start offset is the remote one),
``-4`` answers the local log start offset, ``-5`` the highest uploaded offset (-1: none), and a
timestamp older than the local data (or a greatest timestamp held only by uploaded segments)
is looked up through the remote time indexes. Kafka serves -3, -4 and -5 from v7, v8 and v9;
they are accepted at every version here (librdkafka may send them at a lower one).
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.LIST_OFFSETS
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # KIP-734 (v7 in Kafka)
EARLIEST_LOCAL = -4  # KIP-405 (v8 in Kafka; accepted at every version here)
LATEST_TIERED = -5  # KIP-1005 (v9 in Kafka): highest offset in the bucket, -1 when none


async def _lookup(
    ctx: RequestContext, tp: TopicPartition, timestamp: int, read_committed: bool
) -> tuple[int, int]:
    partition = ctx.broker.replica_manager.get_partition(tp)
    upper = partition.last_stable_offset if read_committed else partition.high_watermark
    if timestamp == LATEST:
        return -1, upper
    if timestamp == EARLIEST:
        return -1, partition.log_start_offset
    rlm = ctx.broker.remote_log_manager
    if timestamp == EARLIEST_LOCAL:
        return -1, partition.log.local_log_start_offset
    if timestamp == LATEST_TIERED:
        return -1, rlm.highest_uploaded_offset(tp) if rlm is not None else -1
    start = partition.log_start_offset
    tiered = rlm is not None and start < partition.log.local_log_start_offset
    if timestamp == MAX_TIMESTAMP:
        found = partition.log.offset_of_max_timestamp()
        remote_max = await rlm.max_timestamp(tp) if tiered else -1
        # a tie goes to the bucket: its copy of the timestamp has the lower offset
        if remote_max >= 0 and (found is None or remote_max >= found[1]):
            found = await rlm.offset_for_timestamp(tp, remote_max, start) or found
    else:
        found = await rlm.offset_for_timestamp(tp, timestamp, start) if tiered else None
        if found is None:
            found = partition.log.offset_for_timestamp(timestamp)
    if found is None:
        return -1, -1
    offset, ts = int(found[0]), int(found[1])
    if offset >= upper:
        return -1, -1
    return ts, offset


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    read_committed = request.get("isolation_level", 0) == 1
    topics = []
    for topic in request["topics"]:
        name = topic["name"]
        parts = []
        for p in topic["partitions"]:
            entry: dict[str, Any] = {"partition_index": p["partition_index"], "error_code": 0}
            try:
                require_topic(ctx, AclOperation.DESCRIBE, name)
                ts, offset = await _lookup(
                    ctx, TopicPartition(name, p["partition_index"]), p["timestamp"], read_committed
                )
                entry.update(timestamp=ts, offset=offset, leader_epoch=0)
            except Exception as e:
                entry.update(error_code=error_code(e), timestamp=-1, offset=-1, leader_epoch=-1)
            parts.append(entry)
        topics.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
