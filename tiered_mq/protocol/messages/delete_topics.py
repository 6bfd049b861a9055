"""DeleteTopics (key 20), versions 1-3 (non-flexible; flexible from 4)."""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 20

REQUEST = Message(
    API_KEY,
    "DeleteTopicsRequest",
    "1-3",
    flexible="4+",
    fields=(
        f("topic_names", array(STRING), "0-5"),
        f("timeout_ms", INT32),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DeleteTopicsResponse",
    "1-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("responses", array(f("name", STRING), f("error_code", INT16))),
    ),
)
