"""EndTxn (key 26), versions 0-2 (non-flexible; flexible from 3). ``committed`` false = abort."""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Message, f

API_KEY = 26

REQUEST = Message(
    API_KEY,
    "EndTxnRequest",
    "0-2",
    flexible="3+",
    fields=(
        f("transactional_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("committed", BOOL),
    ),
)

RESPONSE = Message(
    API_KEY,
    "EndTxnResponse",
    "0-2",
    flexible="3+",
    fields=(f("throttle_time_ms", INT32), f("error_code", INT16)),
)
