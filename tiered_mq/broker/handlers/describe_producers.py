"""DescribeProducers (61), v0: the active producers of partitions this broker hosts.

Per partition, from its producer state (broker/producer_state.py, a walk of the in-memory map,
no log read): producer id and epoch, last sequence, max timestamp of the last batch, the
coordinator epoch of its last marker (-1: none yet) and the first offset of the producer's
ongoing transaction (-1: none). As in Kafka, any replica answers (the client sends to the
leader by default).

Errors, per partition: TOPIC_AUTHORIZATION_FAILED without READ on the topic (checked first, so
an unauthorized principal learns nothing about existence); UNKNOWN_TOPIC_OR_PARTITION for a
topic or partition the cluster does not know; NOT_LEADER_OR_FOLLOWER for a partition that
exists but has no replica here.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import hosted_partition, outcome, require_topic
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.DESCRIBE_PRODUCERS


def _partition(ctx: RequestContext, tp: TopicPartition) -> dict[str, Any]:
    require_topic(ctx, AclOperation.READ, tp.topic)  # first: a refusal reveals no existence
    partition = hosted_partition(ctx, tp)
    producers = [
        {
            "producer_id": p.producer_id,
            "producer_epoch": p.producer_epoch,
            "last_sequence": p.last_sequence,
            "last_timestamp": p.last_timestamp,
            "coordinator_epoch": p.coordinator_epoch,
            "current_txn_start_offset": p.current_txn_start_offset,
        }
        for p in partition.producer_state.active_producers()
    ]
    return {"partition_index": tp.partition, "error_code": 0, "active_producers": producers}


def _error(index: int, exc: Exception) -> dict[str, Any]:
    return {"partition_index": index, **outcome(exc), "active_producers": []}


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for t in request["topics"]:
        name = t["name"]
        partitions = []
        for index in t["partition_indexes"]:
            try:
                partitions.append(_partition(ctx, TopicPartition(name, index)))
            except Exception as e:
                partitions.append(_error(index, e))
        topics.append({"name": name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
