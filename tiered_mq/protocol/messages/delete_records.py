"""DeleteRecords (key 21), versions 0-1 (non-flexible; flexible from 2).

Moves each partition's log start offset up to ``offset`` (-1 = the high watermark).
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 21

REQUEST = Message(
    API_KEY,
    "DeleteRecordsRequest",
    "0-1",
    flexible="2+",
    fields=(
        f(
            "topics",
            array(
                f("name", STRING),
                f("partitions", array(f("partition_index", INT32), f("offset", INT64))),
            ),
        ),
        f("timeout_ms", INT32),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DeleteRecordsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "topics",
            array(
                f("name", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("low_watermark", INT64),
                        f("error_code", INT16),
                    ),
                ),
            ),
        ),
    ),
)
