"""SaslHandshake (key 17), versions 0-1 (never flexible).

v0 is followed by raw SASL tokens on the socket (before KIP-152); v1 by SaslAuthenticate
requests.
"""

from tiered_mq.protocol.schema import INT16, STRING, Message, array, f

API_KEY = 17

REQUEST = Message(API_KEY, "SaslHandshakeRequest", "0-1", fields=(f("mechanism", STRING),))

RESPONSE = Message(
    API_KEY,
    "SaslHandshakeResponse",
    "0-1",
    fields=(f("error_code", INT16), f("mechanisms", array(STRING))),
)
