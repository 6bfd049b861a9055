"""CreateTopics (key 19), versions 2-4 (non-flexible; flexible from 5).

``num_partitions`` / ``replication_factor`` of -1 take the broker defaults (v4+); ``assignments``
lists explicit replicas per partition.
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, STRING, Message, array, f

API_KEY = 19

REQUEST = Message(
    API_KEY,
    "CreateTopicsRequest",
    "2-4",
    flexible="5+",
    fields=(
        f(
            "topics",
            array(
                f("name", STRING),
                f("num_partitions", INT32),
                f("replication_factor", INT16),
                f(
                    "assignments",
                    array(f("partition_index", INT32), f("broker_ids", array(INT32))),
                ),
                f("configs", array(f("name", STRING), f("value", STRING, nullable="0+"))),
            ),
        ),
        f("timeout_ms", INT32, default=60000),
        f("validate_only", BOOL, "1+", default=False),
    ),
)

RESPONSE = Message(
    API_KEY,
    "CreateTopicsResponse",
    "2-4",
    flexible="5+",
    fields=(
        f("throttle_time_ms", INT32, "2+"),
        f(
            "topics",
            array(
                f("name", STRING),
                f("error_code", INT16),
                f("error_message", STRING, "1+", nullable="0+"),
            ),
        ),
    ),
)
