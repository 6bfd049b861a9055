"""Metadata (key 3), versions 0-8 (non-flexible; flexible from 9).

A null ``topics`` (v1+) asks for all topics and an empty list for none; at v0, where
``topics`` cannot be null, an empty list asks for all topics.
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, STRING, Message, array, f

API_KEY = 3

REQUEST = Message(
    API_KEY,
    "MetadataRequest",
    "0-8",
    flexible="9+",
    fields=(
        f("topics", array(f("name", STRING)), nullable="1+"),
        f("allow_auto_topic_creation", BOOL, "4+", default=True),
        f("include_cluster_authorized_operations", BOOL, "8-10"),
        f("include_topic_authorized_operations", BOOL, "8+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "MetadataResponse",
    "0-8",
    flexible="9+",
    fields=(
        f("throttle_time_ms", INT32, "3+"),
        f(
            "brokers",
            array(
                f("node_id", INT32),
                f("host", STRING),
                f("port", INT32),
                f("rack", STRING, "1+", nullable="1+", default=None),
            ),
        ),
        f("cluster_id", STRING, "2+", nullable="2+", default=None),
        f("controller_id", INT32, "1+", default=-1),
        f(
            "topics",
            array(
                f("error_code", INT16),
                f("name", STRING),
                f("is_internal", BOOL, "1+", default=False),
                f(
                    "partitions",
                    array(
                        f("error_code", INT16),
                        f("partition_index", INT32),
                        f("leader_id", INT32),
                        f("leader_epoch", INT32, "7+", default=-1),
                        f("replica_nodes", array(INT32)),
                        f("isr_nodes", array(INT32)),
                        f("offline_replicas", array(INT32), "5+"),
                    ),
                ),
                f("topic_authorized_operations", INT32, "8+", default=-(2**31)),
            ),
        ),
        f("cluster_authorized_operations", INT32, "8-10", default=-(2**31)),
    ),
)
