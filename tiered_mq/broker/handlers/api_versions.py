"""ApiVersions (18): the API/version table of KAFKA_PROTOCOL.md, limited to APIs with a handler.

Versions the codec does not know never reach here: the server answers them with the v0
UNSUPPORTED_VERSION fallback. From v3 (KIP-511) the request names the client's software; a
name or version that is not letters and digits with '-' and '.' inside (Kafka's
``ApiVersionsRequest.isValid``, e.g. empty) is answered INVALID_REQUEST with no API keys, as
Kafka answers it (the response goes out as an erroneous one: see protocol/codec.py).
"""

from __future__ import annotations

import re
from typing import Any, Final

from tiered_mq.broker.context import RequestContext
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey, advertised

API_KEY = ApiKey.API_VERSIONS
SOFTWARE_FROM_VERSION = 3
_SOFTWARE: Final = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def _valid(request: dict[str, Any]) -> bool:
    return all(
        _SOFTWARE.fullmatch(request[field] or "")
        for field in ("client_software_name", "client_software_version")
    )


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= SOFTWARE_FROM_VERSION and not _valid(request):
        return {"error_code": InvalidRequestError.errno, "api_keys": [], "throttle_time_ms": 0}
    return {
        "error_code": 0,
        "api_keys": advertised(ctx.broker.handlers),
        "throttle_time_ms": 0,
    }
