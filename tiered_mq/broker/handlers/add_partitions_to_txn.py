"""AddPartitionsToTxn (24), v0-2: transactions are not supported (see _txn.py)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._txn import UNSUPPORTED
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    results = [
        {
            "name": t["name"],
            "results": [{"partition_index": p, "error_code": UNSUPPORTED} for p in t["partitions"]],
        }
        for t in request.get("topics") or []
    ]
    return {"throttle_time_ms": 0, "results": results}
