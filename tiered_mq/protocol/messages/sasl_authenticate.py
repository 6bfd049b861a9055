"""SaslAuthenticate (key 36), versions 0-1 (non-flexible; flexible from 2)."""

from tiered_mq.protocol.schema import BYTES, INT16, INT64, STRING, Message, f

API_KEY = 36

REQUEST = Message(
    API_KEY,
    "SaslAuthenticateRequest",
    "0-1",
    flexible="2+",
    fields=(f("auth_bytes", BYTES),),
)

RESPONSE = Message(
    API_KEY,
    "SaslAuthenticateResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f("auth_bytes", BYTES),
        f("session_lifetime_ms", INT64, "1+", default=0),
    ),
)
