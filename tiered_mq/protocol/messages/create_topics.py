"""CreateTopics (key 19), versions 2-7 (flexible from 5).

``num_partitions`` / ``replication_factor`` of -1 take the broker defaults (v4+); ``assignments``
lists explicit replicas per partition. From v5 the response describes each created topic: its
partition count, replication factor and every config with its source (Java's
``CreateTopicsResult.config()``); v6 is v5 (it may also answer a quota error); v7 adds the
topic id.
"""

from tiered_mq.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Message,
    array,
    f,
)

API_KEY = 19

REQUEST = Message(
    API_KEY,
    "CreateTopicsRequest",
    "2-7",
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
    "2-7",
    flexible="5+",
    fields=(
        f("throttle_time_ms", INT32, "2+"),
        f(
            "topics",
            array(
                f("name", STRING),
                f("topic_id", UUID, "7+"),
                f("error_code", INT16),
                f("error_message", STRING, "1+", nullable="0+"),
                f("topic_config_error_code", INT16, "5+", tag=0, default=0),
                f("num_partitions", INT32, "5+", default=-1),
                f("replication_factor", INT16, "5+", default=-1),
                f(
                    "configs",
                    array(
                        f("name", STRING, "5+"),
                        f("value", STRING, "5+", nullable="5+"),
                        f("read_only", BOOL, "5+"),
                        f("config_source", INT8, "5+", default=-1),
                        f("is_sensitive", BOOL, "5+"),
                    ),
                    "5+",
                    nullable="5+",
                    default=None,
                ),
            ),
        ),
    ),
)
