"""AddOffsetsToTxn (25), v0-2: add the group's ``__consumer_offsets`` partition to the txn."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._txn import (
    coordinator,
    require_group,
    require_txn_id,
    txn_error_code,
)
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    try:
        require_txn_id(ctx, request["transactional_id"])
        require_group(ctx, request["group_id"])
        await coordinator(ctx).add_offsets(
            request["transactional_id"],
            request["producer_id"],
            request["producer_epoch"],
            request["group_id"],
        )
        code = 0
    except Exception as e:
        code = txn_error_code(ctx, e)
    return {"throttle_time_ms": 0, "error_code": code}
