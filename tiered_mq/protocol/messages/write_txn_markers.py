"""WriteTxnMarkers (key 27), versions 0-1 (flexible from 1). ``transaction_result`` false =
ABORT. Kafka's coordinators send it to partition leaders; admin clients send it to abort a
hanging transaction (KIP-664). v2 (transaction version 2, KIP-890) is not declared."""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 27

REQUEST = Message(
    API_KEY,
    "WriteTxnMarkersRequest",
    "0-1",
    flexible="1+",
    fields=(
        f(
            "markers",
            array(
                f("producer_id", INT64),
                f("producer_epoch", INT16),
                f("transaction_result", BOOL),
                f("topics", array(f("name", STRING), f("partition_indexes", array(INT32)))),
                f("coordinator_epoch", INT32),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "WriteTxnMarkersResponse",
    "0-1",
    flexible="1+",
    fields=(
        f(
            "markers",
            array(
                f("producer_id", INT64),
                f(
                    "topics",
                    array(
                        f("name", STRING),
                        f(
                            "partitions",
                            array(f("partition_index", INT32), f("error_code", INT16)),
                        ),
                    ),
                ),
            ),
        ),
    ),
)
