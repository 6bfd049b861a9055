"""CreatePartitions (key 37), versions 0-1 (non-flexible; flexible from 2).

``count`` is the new total number of partitions; null ``assignments`` lets the broker place them.
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, STRING, Message, array, f

API_KEY = 37

REQUEST = Message(
    API_KEY,
    "CreatePartitionsRequest",
    "0-1",
    flexible="2+",
    fields=(
        f(
            "topics",
            array(
                f("name", STRING),
                f("count", INT32),
                f("assignments", array(f("broker_ids", array(INT32))), nullable="0+"),
            ),
        ),
        f("timeout_ms", INT32),
        f("validate_only", BOOL),
    ),
)

RESPONSE = Message(
    API_KEY,
    "CreatePartitionsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                f("name", STRING),
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+", default=None),
            ),
        ),
    ),
)
