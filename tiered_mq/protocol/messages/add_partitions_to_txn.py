"""AddPartitionsToTxn (key 24), versions 0-2 (non-flexible; flexible from 3).

Field names carry the spec's ``v3_and_below_`` prefix (v4+ batches transactions, not served).
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 24

REQUEST = Message(
    API_KEY,
    "AddPartitionsToTxnRequest",
    "0-2",
    flexible="3+",
    fields=(
        f("v3_and_below_transactional_id", STRING, "0-3"),
        f("v3_and_below_producer_id", INT64, "0-3"),
        f("v3_and_below_producer_epoch", INT16, "0-3"),
        f(
            "v3_and_below_topics",
            array(f("name", STRING), f("partitions", array(INT32))),
            "0-3",
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "AddPartitionsToTxnResponse",
    "0-2",
    flexible="3+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "results_by_topic_v3_and_below",
            array(
                f("name", STRING),
                f(
                    "results_by_partition",
                    array(f("partition_index", INT32), f("partition_error_code", INT16)),
                ),
            ),
            "0-3",
        ),
    ),
)
