"""OffsetForLeaderEpoch (23), v2-3: the end offset of a leader epoch.

Until replication assigns epochs every batch is written in the partition's current leader
epoch (0 on a single node), so: the current epoch (or a newer one) -> the log end offset of the
current epoch; an older epoch -> its end is the first offset of the current epoch, i.e. the log
start offset as no older epoch exists; an epoch above the current one -> UNDEFINED (-1, -1).
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH


def _end_offset(ctx: RequestContext, tp: TopicPartition, epoch: int) -> tuple[int, int]:
    partition = ctx.broker.replica_manager.get_partition(tp)
    current = partition.leader_epoch
    if epoch == current:
        return current, partition.log_end_offset
    if epoch > current:
        return -1, -1
    return epoch, partition.log_start_offset


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for t in request["topics"]:
        parts = []
        for p in t["partitions"]:
            entry: dict[str, Any] = {"partition": p["partition"], "error_code": 0}
            try:
                require_topic(ctx, AclOperation.DESCRIBE, t["topic"])
                epoch, end = _end_offset(
                    ctx, TopicPartition(t["topic"], p["partition"]), p["leader_epoch"]
                )
                entry.update(leader_epoch=epoch, end_offset=end)
            except Exception as e:
                entry.update(error_code=error_code(e), leader_epoch=-1, end_offset=-1)
            parts.append(entry)
        topics.append({"topic": t["topic"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
