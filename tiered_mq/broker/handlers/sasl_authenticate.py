"""SaslAuthenticate (36), v0-1: one round of the SASL exchange (broker/sasl.py).

A failed round is answered SASL_AUTHENTICATION_FAILED with Kafka's message, and the server
closes the connection after the answer. Sessions do not expire (``session_lifetime_ms`` 0:
clients never re-authenticate).
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.errors import IllegalSaslStateError, KafkaError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.SASL_AUTHENTICATE


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    session = ctx.sasl
    answer: dict[str, Any] = {
        "error_code": 0,
        "error_message": None,
        "auth_bytes": b"",
        "session_lifetime_ms": 0,
    }
    try:
        if session is None:
            raise IllegalSaslStateError("this listener does not use SASL")
        answer["auth_bytes"] = session.authenticate(bytes(request["auth_bytes"]))
    except KafkaError as e:
        answer["error_code"], answer["error_message"] = e.errno, str(e)
    return answer
