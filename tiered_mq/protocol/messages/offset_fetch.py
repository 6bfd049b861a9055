"""OffsetFetch (key 9), versions 1-7 (flexible from 6).

A null ``topics`` (v2+) asks for every partition the group has committed. The top-level
``error_code`` exists from v2. v7 adds ``require_stable`` (KIP-447): partitions with pending
transactional offsets answer UNSTABLE_OFFSET_COMMIT instead of their committed offset. v8+
(several groups per request, ``groups``) is left out.
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 9

REQUEST = Message(
    API_KEY,
    "OffsetFetchRequest",
    "1-7",
    flexible="6+",
    fields=(
        f("group_id", STRING, "0-7"),
        f(
            "topics",
            array(
                f("name", STRING, "0-7"),
                f("partition_indexes", array(INT32), "0-7"),
            ),
            "0-7",
            nullable="2-7",
        ),
        f("require_stable", BOOL, "7+", default=False),
    ),
)

RESPONSE = Message(
    API_KEY,
    "OffsetFetchResponse",
    "1-7",
    flexible="6+",
    fields=(
        f("throttle_time_ms", INT32, "3+"),
        f(
            "topics",
            array(
                f("name", STRING, "0-7"),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32, "0-7"),
                        f("committed_offset", INT64, "0-7"),
                        f("committed_leader_epoch", INT32, "5-7", default=-1),
                        f("metadata", STRING, "0-7", nullable="0-7"),
                        f("error_code", INT16, "0-7"),
                    ),
                    "0-7",
                ),
            ),
            "0-7",
        ),
        f("error_code", INT16, "2-7", default=0),
    ),
)
