"""DescribeGroups (key 15), versions 0-4 (non-flexible; flexible from 5)."""

from tiered_mq.protocol.schema import BOOL, BYTES, INT16, INT32, STRING, Message, array, f

API_KEY = 15

REQUEST = Message(
    API_KEY,
    "DescribeGroupsRequest",
    "0-4",
    flexible="5+",
    fields=(
        f("groups", array(STRING)),
        f("include_authorized_operations", BOOL, "3+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DescribeGroupsResponse",
    "0-4",
    flexible="5+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f(
            "groups",
            array(
                f("error_code", INT16),
                f("group_id", STRING),
                f("group_state", STRING),
                f("protocol_type", STRING),
                f("protocol_data", STRING),
                f(
                    "members",
                    array(
                        f("member_id", STRING),
                        f("group_instance_id", STRING, "4+", nullable="4+", default=None),
                        f("client_id", STRING),
                        f("client_host", STRING),
                        f("member_metadata", BYTES),
                        f("member_assignment", BYTES),
                    ),
                ),
                f("authorized_operations", INT32, "3+", default=-(2**31)),
            ),
        ),
    ),
)
