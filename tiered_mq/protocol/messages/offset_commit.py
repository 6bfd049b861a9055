"""OffsetCommit (key 8), versions 0-7 (non-flexible; flexible from 8).

v0-1 are served for clients that never ask ApiVersions (Sarama before 1.41 commits with v1
unless ``Consumer.Offsets.Retention`` is set); v0 has no generation or member id.

``generation_id_or_member_epoch`` is the spec's current name of the classic ``GenerationId``.
``retention_time_ms`` exists in v2-4 only (-1 = broker default).
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 8

REQUEST = Message(
    API_KEY,
    "OffsetCommitRequest",
    "0-7",
    flexible="8+",
    fields=(
        f("group_id", STRING),
        f("generation_id_or_member_epoch", INT32, "1+", default=-1),
        f("member_id", STRING, "1+"),
        f("group_instance_id", STRING, "7+", nullable="7+", default=None),
        f("retention_time_ms", INT64, "2-4", default=-1),
        f(
            "topics",
            array(
                f("name", STRING),
                f(
                    "partitions",
                    array(
                        f("partition_index", INT32),
                        f("committed_offset", INT64),
                        f("committed_leader_epoch", INT32, "6+", default=-1),
                        f("commit_timestamp", INT64, "1", default=-1),
                        f("committed_metadata", STRING, nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "OffsetCommitResponse",
    "0-7",
    flexible="8+",
    fields=(
        f("throttle_time_ms", INT32, "3+"),
        f(
            "topics",
            array(
                f("name", STRING),
                f("partitions", array(f("partition_index", INT32), f("error_code", INT16))),
            ),
        ),
    ),
)
