"""Heartbeat (key 12), versions 0-3 (non-flexible; flexible from 4)."""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, f

API_KEY = 12

REQUEST = Message(
    API_KEY,
    "HeartbeatRequest",
    "0-3",
    flexible="4+",
    fields=(
        f("group_id", STRING),
        f("generation_id", INT32),
        f("member_id", STRING),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
    ),
)

RESPONSE = Message(
    API_KEY,
    "HeartbeatResponse",
    "0-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16),
    ),
)
