"""JoinGroup (key 11), versions 0-5 (non-flexible; flexible from 6).

v0-1 are served, as by Kafka 4.0.1+ (KAFKA-19444 added them back after KIP-896 dropped them):
Sarama before 1.41 (Debian's is 1.22) joins with v1 whatever the broker advertises.

Protocol ``metadata`` and member ``metadata`` are opaque bytes (the consumer protocol's
subscription), decoded as ``bytes``.
"""

from tiered_mq.protocol.schema import BYTES, INT16, INT32, STRING, Message, array, f

API_KEY = 11

REQUEST = Message(
    API_KEY,
    "JoinGroupRequest",
    "0-5",
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
    "0-5",
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
