"""DeleteGroups (key 42), versions 0-1 (non-flexible; flexible from 2)."""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 42

REQUEST = Message(
    API_KEY,
    "DeleteGroupsRequest",
    "0-1",
    flexible="2+",
    fields=(f("groups_names", array(STRING)),),
)

RESPONSE = Message(
    API_KEY,
    "DeleteGroupsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f("results", array(f("group_id", STRING), f("error_code", INT16))),
    ),
)
