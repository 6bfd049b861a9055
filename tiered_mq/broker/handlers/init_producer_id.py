"""InitProducerId (22), v0-1: a fresh producer id (epoch 0) for an idempotent producer.

Ids come from durably reserved blocks (``ProducerIdManager``), so a restart never hands out an
id twice. Transactional producers (non-null ``transactional_id``) are not supported yet: they get
UNSUPPORTED_VERSION, which clients report as a fatal error instead of retrying.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.errors import UnsupportedVersionError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.INIT_PRODUCER_ID


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("transactional_id") is not None:
        return {
            "throttle_time_ms": 0,
            "error_code": UnsupportedVersionError.errno,
            "producer_id": -1,
            "producer_epoch": -1,
        }
    pid = await ctx.broker.producer_id_manager.generate_producer_id()
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": pid, "producer_epoch": 0}
