"""ApiVersions (18): the API/version table of KAFKA_PROTOCOL.md, limited to APIs with a handler.

Versions the codec does not know never reach here: the server answers them with the v0
UNSUPPORTED_VERSION fallback.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.protocol.api_versions import ApiKey, advertised

API_KEY = ApiKey.API_VERSIONS


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "error_code": 0,
        "api_keys": advertised(ctx.broker.handlers),
        "throttle_time_ms": 0,
    }
