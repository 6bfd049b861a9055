"""EndTxn (26), v0-2: transactions are not supported (see _txn.py)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._txn import UNSUPPORTED
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.END_TXN


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": UNSUPPORTED}
