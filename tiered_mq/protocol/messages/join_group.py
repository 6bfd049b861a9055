"""JoinGroup (key 11), versions 2-5 (non-flexible; flexible from 6).

Protocol ``metadata`` and member ``metadata`` are opaque bytes (the consumer protocol's
subscription), decoded as ``bytes``.
"""

from tiered_mq.protocol.schema import BYTES, INT16, INT32, STRING, Message, array, f

API_KEY = 11

REQUEST = Message(
    API_KEY,
    "JoinGroupRequest",
    "2-5",
    flexible="6+",
    fields=(
        f("group_id", STRING),
        f("session_timeout_ms", INT32),
        f("rebalance_timeout_ms", INT32, "1+", default=-1),
        f("member_id", STRING),
        f("group_instance_id", STRING, "5+", nullable="5+", default=None),
        f("protocol_type", STRING),
        f("protocols", array(f("name", STRING), f("metadata", BYTES))),
    ),
)

RESPONSE = Message(
    API_KEY,
    "JoinGroupResponse",
    "2-5",
    flexible="6+",
    fields=(
        f("throttle_time_ms", INT32, "2+"),
        f("error_code", INT16),
        f("generation_id", INT32, default=-1),
        f("protocol_name", STRING, nullable="7+"),
        f("leader", STRING),
        f("member_id", STRING),
        f(
            "members",
            array(
                f("member_id", STRING),
                f("group_instance_id", STRING, "5+", nullable="5+", default=None),
                f("metadata", BYTES),
            ),
        ),
    ),
)
