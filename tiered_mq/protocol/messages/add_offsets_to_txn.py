"""AddOffsetsToTxn (key 25), versions 0-2 (non-flexible; flexible from 3)."""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, f

API_KEY = 25

REQUEST = Message(
    API_KEY,
    "AddOffsetsToTxnRequest",
    "0-2",
    flexible="3+",
    fields=(
        f("transactional_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("group_id", STRING),
    ),
)

RESPONSE = Message(
    API_KEY,
    "AddOffsetsToTxnResponse",
    "0-2",
    flexible="3+",
    fields=(f("throttle_time_ms", INT32), f("error_code", INT16)),
)
