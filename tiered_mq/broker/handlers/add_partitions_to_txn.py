"""AddPartitionsToTxn (24), v0-2: add partitions to the producer's ongoing transaction.

All or nothing, as in Kafka: a partition this broker does not host answers
UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED; a coordinator error
(fenced epoch, unknown id, concurrent end) is answered in every partition's slot.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._txn import coordinator, txn_error_code
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
NOT_ATTEMPTED = 55  # OPERATION_NOT_ATTEMPTED


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    topics = request.get("v3_and_below_topics") or []
    tps = [TopicPartition(t["name"], p) for t in topics for p in t["partitions"]]
    hosted = ctx.broker.replica_manager.partitions
    codes: dict[TopicPartition, int] = {}
    unknown = [tp for tp in tps if tp not in hosted]
    txn_id = request["v3_and_below_transactional_id"]
    write = AclOperation.WRITE
    denied = [tp for tp in tps if not ctx.authorize(write, ResourceType.TOPIC, tp.topic)]
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
        codes = dict.fromkeys(tps, errors.TransactionalIdAuthorizationFailedError.errno)
    elif denied:
        codes = dict.fromkeys(tps, NOT_ATTEMPTED)
        codes.update(dict.fromkeys(denied, errors.TopicAuthorizationFailedError.errno))
    elif unknown:
        codes = dict.fromkeys(tps, NOT_ATTEMPTED)
        codes.update(dict.fromkeys(unknown, errors.UnknownTopicOrPartitionError.errno))
    else:
        try:
            await coordinator(ctx).add_partitions(
                txn_id,
                request["v3_and_below_producer_id"],
                request["v3_and_below_producer_epoch"],
                tps,
            )
            codes = dict.fromkeys(tps, 0)
        except Exception as e:
            codes = dict.fromkeys(tps, txn_error_code(ctx, e))
    results = [
        {
            "name": t["name"],
            "results_by_partition": [
                {
                    "partition_index": p,
                    "partition_error_code": codes[TopicPartition(t["name"], p)],
                }
                for p in t["partitions"]
            ],
        }
        for t in topics
    ]
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
