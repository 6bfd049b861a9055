"""DescribeTransactions (key 65), version 0 (flexible from 0: compact encodings, tagged fields)."""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 65

REQUEST = Message(
    API_KEY,
    "DescribeTransactionsRequest",
    "0",
    flexible="0+",
    fields=(f("transactional_ids", array(STRING)),),
)

RESPONSE = Message(
    API_KEY,
    "DescribeTransactionsResponse",
    "0",
    flexible="0+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "transaction_states",
            array(
                f("error_code", INT16),
                f("transactional_id", STRING),
                f("transaction_state", STRING),
                f("transaction_timeout_ms", INT32),
                f("transaction_start_time_ms", INT64),
                f("producer_id", INT64),
                f("producer_epoch", INT16),
                f("topics", array(f("topic", STRING), f("partitions", array(INT32)))),
            ),
        ),
    ),
)
