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
            "results_by_partition": [
                {"partition_index": p, "partition_error_code": UNSUPPORTED} for p in t["partitions"]
            ],
        }
        for t in request.get("v3_and_below_topics") or []
    ]
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
