"""OffsetForLeaderEpoch (23), v2-3: the end offset of a leader epoch.

Per partition, after the topic's DESCRIBE authorization, the client's ``current_leader_epoch``
is checked as Kafka's ``Partition.lastOffsetForLeaderEpoch`` does (broker/leader_epochs.py: -1
is not checked, an older one is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH; the
answer then carries leader epoch and end offset -1). The answer is Kafka's ``endOffsetFor``
(leader_epochs.end_offset_for): the current epoch -> the log end offset; an older epoch -> the
first offset written in a later epoch, with the greatest epoch not above the one asked; an
epoch above the current one -> UNDEFINED (-1, -1).
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.broker.leader_epochs import check_current_epoch, end_offset_for
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH


def _end_offset(ctx: RequestContext, tp: TopicPartition, p: dict[str, Any]) -> tuple[int, int]:
    partition = ctx.broker.replica_manager.get_partition(tp)
    check_current_epoch(partition, p.get("current_leader_epoch", -1))
    return end_offset_for(partition, p["leader_epoch"])


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for t in request["topics"]:
        parts = []
        for p in t["partitions"]:
            entry: dict[str, Any] = {"partition": p["partition"], "error_code": 0}
            try:
                require_topic(ctx, AclOperation.DESCRIBE, t["topic"])
                epoch, end = _end_offset(ctx, TopicPartition(t["topic"], p["partition"]), p)
                entry.update(leader_epoch=epoch, end_offset=end)
            except Exception as e:
                entry.update(error_code=error_code(e), leader_epoch=-1, end_offset=-1)
            parts.append(entry)
        topics.append({"topic": t["topic"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
