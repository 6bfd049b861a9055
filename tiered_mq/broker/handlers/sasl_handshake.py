"""SaslHandshake (17), v0-1: the client names its SASL mechanism (broker/sasl.py).

After v1 the tokens come in SaslAuthenticate requests; after v0 (before KIP-152) as raw
size-prefixed frames, which the server hands to the session itself. librdkafka before 2.11.1
enables SASL only if the advertised range holds v0, even though it then sends v1. On a
listener without SASL the answer is ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.errors import IllegalSaslStateError, KafkaError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.SASL_HANDSHAKE


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    session = ctx.sasl
    if session is None:
        return {"error_code": IllegalSaslStateError.errno, "mechanisms": []}
    try:
        session.handshake(request["mechanism"], raw_tokens=ctx.api_version == 0)
        code = 0
    except KafkaError as e:
        code = e.errno
    return {"error_code": code, "mechanisms": list(session.config.mechanisms)}
