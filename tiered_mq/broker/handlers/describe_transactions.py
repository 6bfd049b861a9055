"""DescribeTransactions (65), v0: the coordinator's state of each transactional id.

Per id: the state as Kafka spells it (Empty, Ongoing, PrepareCommit, PrepareAbort,
CompleteCommit, CompleteAbort, PrepareEpochFence), the transaction timeout, the start time of
the current (or last) transaction (-1 before the first), producer id and epoch, and the
partitions in the transaction grouped by topic (empty once it completes). As in Kafka, topics
the principal may not DESCRIBE are left out of the partition list.

Errors, per id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED without DESCRIBE on the TRANSACTIONAL_ID
resource; INVALID_REQUEST for an empty id; COORDINATOR_LOAD_IN_PROGRESS while the coordinator
loads ``__transaction_state``; TRANSACTIONAL_ID_NOT_FOUND for an id it does not know (or Dead).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require
from tiered_mq.broker.handlers._txn import coordinator
from tiered_mq.broker.txn.coordinator import state_name
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS


def _describe(ctx: RequestContext, txn_id: str) -> dict[str, Any]:
    denied = errors.TransactionalIdAuthorizationFailedError
    require(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, txn_id, denied)
    if not txn_id:
        raise errors.InvalidRequestError("empty transactional id")
    meta = coordinator(ctx).describe_txn(txn_id)
    if meta is None:
        return {"transactional_id": txn_id, "error_code": errors.TransactionalIdNotFoundError.errno}
    by_topic: dict[str, list[int]] = defaultdict(list)
    for tp in meta.partitions:
        by_topic[tp.topic].append(tp.partition)
    describe = AclOperation.DESCRIBE
    topics = [
        {"topic": topic, "partitions": sorted(parts)}
        for topic, parts in sorted(by_topic.items())
        if ctx.authorize(describe, ResourceType.TOPIC, topic)
    ]
    return {
        "error_code": 0,
        "transactional_id": txn_id,
        "transaction_state": state_name(meta.state),
        "transaction_timeout_ms": meta.timeout_ms,
        "transaction_start_time_ms": meta.start_ms,
        "producer_id": meta.producer_id,
        "producer_epoch": meta.producer_epoch,
        "topics": topics,
    }


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    states = []
    for txn_id in request["transactional_ids"]:
        try:
            states.append(_describe(ctx, txn_id))
        except Exception as e:
            states.append({"transactional_id": txn_id, "error_code": error_code(e)})
    return {"throttle_time_ms": 0, "transaction_states": states}
