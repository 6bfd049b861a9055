"""ListOffsets (key 2), versions 1-10 (flexible from 6).

``timestamp`` -1 asks for the latest offset (high watermark / LSO), -2 for the earliest (log
start offset), -3 for the record with the greatest timestamp (v7+), -4 for the local log start
offset (v8+), -5 for the highest offset in remote storage (v9+). v10 adds ``timeout_ms`` for
lookups that read remote storage.
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 2

REQUEST = Message(
    API_KEY,
    "ListOffsetsRequest",
    "1-10",
    flexible="6+",
    fields=(
        f("replica_id", INT32),
        f("isolation_level", INT8, "2+"),
        f(
            "topics",
            array(
                f("name", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("current_leader_epoch", INT32, "4+", default=-1),
                        f("timestamp", INT64),
                        f("max_num_offsets", INT32, "0", default=1),
                    ),
                ),
            ),
        ),
        f("timeout_ms", INT32, "10+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "ListOffsetsResponse",
    "1-10",
    flexible="6+",
    fields=(
        f("throttle_time_ms", INT32, "2+"),
        f(
            "topics",
            array(
                f("name", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("error_code", INT16),
                        f("old_style_offsets", array(INT64), "0"),
                        f("timestamp", INT64, "1+", default=-1),
                        f("offset", INT64, "1+", default=-1),
                        f("leader_epoch", INT32, "4+", default=-1),
                    ),
                ),
            ),
        ),
    ),
)
