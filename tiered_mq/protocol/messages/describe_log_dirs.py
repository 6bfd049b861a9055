"""DescribeLogDirs (key 35), versions 1-4 (flexible from 2; v0 was removed in Kafka 4.0).

A null ``topics`` asks for every partition the broker hosts. v3 adds the top-level
``error_code``, v4 each log dir's ``total_bytes`` / ``usable_bytes`` (-1 when unknown).
v5 (``is_cordoned``) is left out: kafka-python 3 takes DescribeLogDirs v5 as the mark of a
Kafka 4.3 broker and would then expect APIs this broker lacks (InitProducerId v3+).
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 35

REQUEST = Message(
    API_KEY,
    "DescribeLogDirsRequest",
    "1-4",
    flexible="2+",
    fields=(
        f(
            "topics",
            array(f("topic", STRING), f("partitions", array(INT32))),
            nullable="0+",
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DescribeLogDirsResponse",
    "1-4",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16, "3+"),
        f(
            "results",
            array(
                f("error_code", INT16),
                f("log_dir", STRING),
                f(
                    "topics",
                    array(
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                f("partition_index", INT32),
                                f("partition_size", INT64),
                                f("offset_lag", INT64),
                                f("is_future_key", BOOL),
                            ),
                        ),
                    ),
                ),
                f("total_bytes", INT64, "4+", default=-1),
                f("usable_bytes", INT64, "4+", default=-1),
            ),
        ),
    ),
)
