"""FindCoordinator (key 10), versions 0-2 (non-flexible; flexible from 3).

``key_type`` (v1+): 0 = group, 1 = transaction.
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, STRING, Message, f

API_KEY = 10

REQUEST = Message(
    API_KEY,
    "FindCoordinatorRequest",
    "0-2",
    flexible="3+",
    fields=(
        f("key", STRING, "0-3"),
        f("key_type", INT8, "1+", default=0),
    ),
)

RESPONSE = Message(
    API_KEY,
    "FindCoordinatorResponse",
    "0-2",
    flexible="3+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16, "0-3"),
        f("error_message", STRING, "1-3", nullable="1-3"),
        f("node_id", INT32, "0-3"),
        f("host", STRING, "0-3"),
        f("port", INT32, "0-3"),
    ),
)
