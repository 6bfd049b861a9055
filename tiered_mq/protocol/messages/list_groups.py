"""ListGroups (key 16), versions 0-2 (non-flexible; flexible from 3). The request is empty."""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 16

REQUEST = Message(API_KEY, "ListGroupsRequest", "0-2", flexible="3+", fields=())

RESPONSE = Message(
    API_KEY,
    "ListGroupsResponse",
    "0-2",
    flexible="3+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16),
        f("groups", array(f("group_id", STRING), f("protocol_type", STRING))),
    ),
)
