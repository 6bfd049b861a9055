"""TxnOffsetCommit (key 28), versions 0-2 (non-flexible; flexible from 3)."""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 28

REQUEST = Message(
    API_KEY,
    "TxnOffsetCommitRequest",
    "0-2",
    flexible="3+",
    fields=(
        f("transactional_id", STRING),
        f("group_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f(
            "topics",
            array(
                f("name", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("committed_offset", INT64),
                        f("committed_leader_epoch", INT32, "2+", default=-1),
                        f("committed_metadata", STRING, nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "TxnOffsetCommitResponse",
    "0-2",
    flexible="3+",
    fields=(
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
