"""Fetch (key 1), versions 4-11 (non-flexible; flexible from 12).

Response ``records`` may be bytes, a memoryview, or a list of bytes/memoryview/FileRegion
(whole batches concatenated); the encoder keeps FileRegions as separate chunks for sendfile.
``throttle_time_ms`` comes first. ``aborted_transactions`` is null-able (v4+).
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, INT64, RECORDS, STRING, Message, array, f

API_KEY = 1

REQUEST = Message(
    API_KEY,
    "FetchRequest",
    "4-11",
    flexible="12+",
    fields=(
        f("replica_id", INT32, "0-14", default=-1),
        f("max_wait_ms", INT32),
        f("min_bytes", INT32),
        f("max_bytes", INT32, "3+", default=0x7FFFFFFF),
        f("isolation_level", INT8, "4+", default=0),
        f("session_id", INT32, "7+", default=0),
        f("session_epoch", INT32, "7+", default=-1),
        f(
            "topics",
            array(
                f("topic", STRING),
                f(
                    "partitions",
                    array(
                        f("partition", INT32),
                        f("current_leader_epoch", INT32, "9+", default=-1),
                        f("fetch_offset", INT64),
                        f("log_start_offset", INT64, "5+", default=-1),
                        f("partition_max_bytes", INT32),
                    ),
                ),
            ),
        ),
        f(
            "forgotten_topics_data",
            array(
                f("topic", STRING, "7+"),
                f("partitions", array(INT32), "7+"),
            ),
            "7+",
        ),
        f("rack_id", STRING, "11+", default=""),
    ),
)

RESPONSE = Message(
    API_KEY,
    "FetchResponse",
    "4-11",
    flexible="12+",
    fields=(
        f("throttle_time_ms", INT32, "1+"),
        f("error_code", INT16, "7+"),
        f("session_id", INT32, "7+", default=0),
        f(
            "responses",
            array(
                f("topic", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("error_code", INT16),
                        f("high_watermark", INT64),
                        f("last_stable_offset", INT64, "4+", default=-1),
                        f("log_start_offset", INT64, "5+", default=-1),
                        f(
                            "aborted_transactions",
                            array(
                                f("producer_id", INT64, "4+"),
                                f("first_offset", INT64, "4+"),
                            ),
                            "4+",
                            nullable="4+",
                        ),
                        f("preferred_read_replica", INT32, "11+", default=-1),
                        f("records", RECORDS, nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)
