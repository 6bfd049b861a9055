"""InitProducerId (22), v0-1: a producer id and epoch for an idempotent or transactional producer.

Without ``transactional_id``: a fresh producer id (epoch 0) from durably reserved blocks
(``ProducerIdManager``), so a restart never hands out an id twice. With one: the transaction
coordinator's id for it, its epoch bumped (fencing older instances; an ongoing transaction of
the previous instance is aborted first); ``transaction_timeout_ms`` above
``transaction.max.timeout.ms`` is INVALID_TRANSACTION_TIMEOUT.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.broker.handlers._txn import coordinator, require_txn_id
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.INIT_PRODUCER_ID


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    txn_id = request.get("transactional_id")
    if txn_id is None:
        idempotent_write = ctx.authorize(
            AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME
        )
        if not (idempotent_write or ctx.authorize_any(AclOperation.WRITE, ResourceType.TOPIC)):
            code = errors.ClusterAuthorizationFailedError.errno
            return {"error_code": code, "producer_id": -1, "producer_epoch": -1}
        pid = await ctx.broker.producer_id_manager.generate_producer_id()
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id": pid, "producer_epoch": 0}
    try:
        require_txn_id(ctx, txn_id)
        pid, epoch = await coordinator(ctx).init_producer_id(
            txn_id, request["transaction_timeout_ms"]
        )
    except Exception as e:
        return {
            "throttle_time_ms": 0,
            "error_code": error_code(e),
            "producer_id": -1,
            "producer_epoch": -1,
        }
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": pid, "producer_epoch": epoch}
