"""ListGroups (key 16), versions 0-5 (flexible from 3).

v4 adds the request's ``states_filter`` and each listed group's ``group_state`` (KIP-518); v5
adds ``types_filter`` and ``group_type`` (KIP-848). An empty filter lists every group.
"""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 16

REQUEST = Message(
    API_KEY,
    "ListGroupsRequest",
    "0-5",
    flexible="3+",
    fields=(
        f("states_filter", array(STRING), "4+"),
        f("types_filter", array(STRING), "5+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "ListGroupsResponse",
    "0-5",
    flexible="3+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16),
        f(
            "groups",
            array(
                f("group_id", STRING),
                f("protocol_type", STRING),
                f("group_state", STRING, "4+"),
                f("group_type", STRING, "5+"),
            ),
        ),
    ),
)
