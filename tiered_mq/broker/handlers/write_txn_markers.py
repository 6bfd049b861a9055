"""WriteTxnMarkers (27), v0-1: write COMMIT/ABORT markers into partitions this broker leads.

In Kafka the transaction coordinator sends it to partition leaders; here the coordinator
writes its markers in-process (broker/txn/markers.py), so the senders are admin clients
aborting a hanging transaction (KIP-664: ``kafka-transactions.sh abort``, Java's
``Admin.abortTransaction``, kafka-python's ``abort_transaction``). They name the producer id and
epoch and the coordinator epoch that DescribeProducers reported.

Errors: CLUSTER_AUTHORIZATION_FAILED for every partition without CLUSTER_ACTION on the cluster
(as in Kafka, this is an inter-broker permission); per partition UNKNOWN_TOPIC_OR_PARTITION /
NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH (the partition saw a newer producer epoch) and
TRANSACTION_COORDINATOR_FENCED (its last marker came from a newer coordinator epoch). An
offline partition (its log failed to open) is UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers a
partition it has no online log for (ReplicaManager.getMagic), not KAFKA_STORAGE_ERROR.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, hosted_partition, require_cluster
from tiered_mq.broker.txn.markers import write_marker
from tiered_mq.errors import UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.WRITE_TXN_MARKERS


async def _write(ctx: RequestContext, marker: dict[str, Any], tp: TopicPartition) -> int:
    try:
        require_cluster(ctx, AclOperation.CLUSTER_ACTION)  # an inter-broker permission in Kafka
        if tp in ctx.broker.replica_manager.offline:
            raise UnknownTopicOrPartitionError(f"{tp} is offline: no log to write the marker to")
        hosted_partition(ctx, tp)
        await write_marker(
            ctx.broker.replica_manager,
            ctx.broker.group_coordinator,
            tp,
            marker["producer_id"],
            marker["producer_epoch"],
            bool(marker["transaction_result"]),
            marker["coordinator_epoch"],
        )
    except Exception as e:
        return error_code(e)
    return 0


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    results = []
    for marker in request["markers"]:
        topics = []
        for t in marker["topics"]:
            name = t["name"]
            partitions = [
                {
                    "partition_index": i,
                    "error_code": await _write(ctx, marker, TopicPartition(name, i)),
                }
                for i in t["partition_indexes"]
            ]
            topics.append({"name": name, "partitions": partitions})
        results.append({"producer_id": marker["producer_id"], "topics": topics})
    return {"markers": results}
