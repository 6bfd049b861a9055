"""OffsetForLeaderEpoch (key 23), versions 2-3 (non-flexible; flexible from 4).

``replica_id`` (v3+) is -1 for a consumer, -2 (default) for a debugging client.
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 23

REQUEST = Message(
    API_KEY,
    "OffsetForLeaderEpochRequest",
    "2-3",
    flexible="4+",
    fields=(
        f("replica_id", INT32, "3+", default=-2),
        f(
            "topics",
            array(
                f("topic", STRING),
                f(
                    "partitions",
                    array(
                        f("partition", INT32),
                        f("current_leader_epoch", INT32, "2+", default=-1),
                        f("leader_epoch", INT32),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "OffsetForLeaderEpochResponse",
    "2-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32, "2+"),
        f(
            "topics",
            array(
                f("topic", STRING),
                f(
                    "partitions",
                    array(
                        f("error_code", INT16),
                        f("partition", INT32),
                        f("leader_epoch", INT32, "1+", default=-1),
                        f("end_offset", INT64, default=-1),
                    ),
                ),
            ),
        ),
    ),
)
