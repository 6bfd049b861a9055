"""LeaveGroup (key 13), versions 0-3 (non-flexible; flexible from 4).

v0-2 name one ``member_id``; v3 carries a batch of ``members`` (with group instance ids) and the
response answers each.
"""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 13

REQUEST = Message(
    API_KEY,
    "LeaveGroupRequest",
    "0-3",
    flexible="4+",
    fields=(
        f("group_id", STRING),
        f("member_id", STRING, "0-2"),
        f(
            "members",
            array(
                f("member_id", STRING, "3+"),
                f("group_instance_id", STRING, "3+", nullable="3+", default=None),
            ),
            "3+",
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "LeaveGroupResponse",
    "0-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16),
        f(
            "members",
            array(
                f("member_id", STRING, "3+"),
                f("group_instance_id", STRING, "3+", nullable="3+"),
                f("error_code", INT16, "3+"),
            ),
            "3+",
        ),
    ),
)
