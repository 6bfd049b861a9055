"""SyncGroup (key 14), versions 0-3 (non-flexible; flexible from 4).

Assignments are opaque bytes (the consumer protocol's assignment), decoded as ``bytes``.
"""

from tiered_mq.protocol.schema import BYTES, INT16, INT32, STRING, Message, array, f

API_KEY = 14

REQUEST = Message(
    API_KEY,
    "SyncGroupRequest",
    "0-3",
    flexible="4+",
    fields=(
        f("group_id", STRING),
        f("generation_id", INT32),
        f("member_id", STRING),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
        f("assignments", array(f("member_id", STRING), f("assignment", BYTES))),
    ),
)

RESPONSE = Message(
    API_KEY,
    "SyncGroupResponse",
    "0-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16),
        f("assignment", BYTES),
    ),
)
