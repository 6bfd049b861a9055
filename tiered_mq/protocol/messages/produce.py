"""Produce (key 0), versions 0-8 (non-flexible; flexible from 9).

The codec handles 0-8; the broker serves only 3+ (one magic-2 batch per partition) and answers
v0-2 with UNSUPPORTED_VERSION. ``records`` decodes to a zero-copy memoryview of the frame.
The response puts ``throttle_time_ms`` last.
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, RECORDS, STRING, Message, array, f

API_KEY = 0

REQUEST = Message(
    API_KEY,
    "ProduceRequest",
    "0-8",
    flexible="9+",
    fields=(
        f("transactional_id", STRING, "3+", nullable="3+", default=None),
        f("acks", INT16),
        f("timeout_ms", INT32),
        f(
            "topic_data",
            array(
                f("name", STRING),
                f(
                    "partition_data",
                    array(
                        f("index", INT32),
                        f("records", RECORDS, nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "ProduceResponse",
    "0-8",
    flexible="9+",
    fields=(
        f(
            "responses",
            array(
                f("name", STRING),
                f(
                    "partition_responses",
                    array(
                        f("index", INT32),
                        f("error_code", INT16),
                        f("base_offset", INT64),
                        f("log_append_time_ms", INT64, "2+", default=-1),
                        f("log_start_offset", INT64, "5+", default=-1),
                        f(
                            "record_errors",
                            array(
                                f("batch_index", INT32, "8+"),
                                f(
                                    "batch_index_error_message",
                                    STRING,
                                    "8+",
                                    nullable="8+",
                                    default=None,
                                ),
                            ),
                            "8+",
                        ),
                        f("error_message", STRING, "8+", nullable="8+", default=None),
                    ),
                ),
            ),
        ),
        f("throttle_time_ms", INT32, "1+", default=0),
    ),
)
