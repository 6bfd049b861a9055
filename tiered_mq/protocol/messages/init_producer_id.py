"""InitProducerId (key 22), versions 0-1 (non-flexible; flexible from 2).

A null ``transactional_id`` asks for an idempotent producer id.
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, f

API_KEY = 22

REQUEST = Message(
    API_KEY,
    "InitProducerIdRequest",
    "0-1",
    flexible="2+",
    fields=(
        f("transactional_id", STRING, nullable="0+"),
        f("transaction_timeout_ms", INT32),
    ),
)

RESPONSE = Message(
    API_KEY,
    "InitProducerIdResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("producer_id", INT64, default=-1),
        f("producer_epoch", INT16),
    ),
)
