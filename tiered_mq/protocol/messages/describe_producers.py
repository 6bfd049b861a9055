"""DescribeProducers (key 61), version 0 (flexible from 0: compact encodings, tagged fields)."""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 61

REQUEST = Message(
    API_KEY,
    "DescribeProducersRequest",
    "0",
    flexible="0+",
    fields=(f("topics", array(f("name", STRING), f("partition_indexes", array(INT32)))),),
)

RESPONSE = Message(
    API_KEY,
    "DescribeProducersResponse",
    "0",
    flexible="0+",
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
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+", default=None),
                        f(
                            "active_producers",
                            array(
                                f("producer_id", INT64),
                                f("producer_epoch", INT32),
                                f("last_sequence", INT32, default=-1),
                                f("last_timestamp", INT64, default=-1),
                                f("coordinator_epoch", INT32),
                                f("current_txn_start_offset", INT64, default=-1),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    ),
)
