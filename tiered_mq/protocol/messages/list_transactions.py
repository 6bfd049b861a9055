"""ListTransactions (key 66), versions 0-2 (flexible from 0: compact encodings, tagged fields).

v1 adds ``duration_filter`` (KIP-994), v2 ``transactional_id_pattern`` (KIP-1152).
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 66

REQUEST = Message(
    API_KEY,
    "ListTransactionsRequest",
    "0-2",
    flexible="0+",
    fields=(
        f("state_filters", array(STRING)),
        f("producer_id_filters", array(INT64)),
        f("duration_filter", INT64, "1+", default=-1),
        f("transactional_id_pattern", STRING, "2+", nullable="2+", default=None),
    ),
)

RESPONSE = Message(
    API_KEY,
    "ListTransactionsResponse",
    "0-2",
    flexible="0+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("unknown_state_filters", array(STRING)),
        f(
            "transaction_states",
            array(
                f("transactional_id", STRING),
                f("producer_id", INT64),
                f("transaction_state", STRING),
            ),
        ),
    ),
)
