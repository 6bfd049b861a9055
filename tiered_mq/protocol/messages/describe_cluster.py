"""DescribeCluster (key 60), versions 0-2, all flexible (KIP-700).

v1 adds ``endpoint_type`` (1 = brokers, 2 = controllers, KIP-919) and the top-level errors
MISMATCHED_ENDPOINT_TYPE / UNSUPPORTED_ENDPOINT_TYPE; v2 adds ``include_fenced_brokers`` and
each broker's ``is_fenced`` (KIP-1073). ``cluster_authorized_operations`` is a bit field
(bit n = AclOperation n), -2147483648 when not asked for.
"""

from tiered_mq.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 60

REQUEST = Message(
    API_KEY,
    "DescribeClusterRequest",
    "0-2",
    flexible="0+",
    fields=(
        f("include_cluster_authorized_operations", BOOL),
        f("endpoint_type", INT8, "1+", default=1),
        f("include_fenced_brokers", BOOL, "2+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DescribeClusterResponse",
    "0-2",
    flexible="0+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+", default=None),
        f("endpoint_type", INT8, "1+", default=1),
        f("cluster_id", STRING),
        f("controller_id", INT32, default=-1),
        f(
            "brokers",
            array(
                f("broker_id", INT32),
                f("host", STRING),
                f("port", INT32),
                f("rack", STRING, nullable="0+", default=None),
                f("is_fenced", BOOL, "2+"),
            ),
        ),
        f("cluster_authorized_operations", INT32, default=-(2**31)),
    ),
)
