"""EndTxn (26), v0-2: commit or abort the producer's transaction.

Answered once the COMMIT/ABORT markers are in every partition of the transaction and the
transaction's offsets are committed (or dropped); see broker/txn/coordinator.py.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._txn import coordinator, require_txn_id, txn_error_code
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.END_TXN


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    try:
        require_txn_id(ctx, request["transactional_id"])
        await coordinator(ctx).end_txn(
            request["transactional_id"],
            request["producer_id"],
            request["producer_epoch"],
            bool(request["committed"]),
        )
        code = 0
    except Exception as e:
        code = txn_error_code(ctx, e)
    return {"throttle_time_ms": 0, "error_code": code}
