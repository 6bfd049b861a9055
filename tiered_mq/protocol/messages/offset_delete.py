"""OffsetDelete (key 47), version 0 (non-flexible; the spec has no flexible version yet).

The response carries the top-level ``error_code`` first and ``throttle_time_ms`` second.
"""

from tiered_mq.protocol.schema import INT16, INT32, STRING, Message, array, f

API_KEY = 47

REQUEST = Message(
    API_KEY,
    "OffsetDeleteRequest",
    "0",
    fields=(
        f("group_id", STRING),
        f("topics", array(f("name", STRING), f("partitions", array(f("partition_index", INT32))))),
    ),
)

RESPONSE = Message(
    API_KEY,
    "OffsetDeleteResponse",
    "0",
    fields=(
        f("error_code", INT16),
        f("throttle_time_ms", INT32),
        f(
            "topics",
            array(
                f("name", STRING),
                f("partitions", array(f("partition_index", INT32), f("error_code", INT16))),
            ),
        ),
    ),
)
