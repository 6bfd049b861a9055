"""TxnOffsetCommit (key 28), versions 0-3 (flexible from 3).

v3 (KIP-447) adds the committing consumer's group membership (generation, member id, instance
id): the Java producer's ``sendOffsetsToTransaction(offsets, consumer.groupMetadata())`` needs
it and refuses older versions. v4-5 belong to transactions v2 (KIP-890), not served here.
"""

from tiered_mq.protocol.schema import INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 28

REQUEST = Message(
    API_KEY,
    "TxnOffsetCommitRequest",
    "0-3",
    flexible="3+",
    fields=(
        f("transactional_id", STRING),
        f("group_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("generation_id", INT32, "3+", default=-1),
        f("member_id", STRING, "3+", default=""),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
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
    "0-3",
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
