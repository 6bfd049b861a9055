"""ApiVersions (key 18), versions 0-3; v3 is flexible (compact strings/arrays, tagged fields).

The response always goes out with response header v0, even at v3 (Kafka's rule, so a client
can read the error of a version it does not know).
"""

from tiered_mq.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Message, array, f

API_KEY = 18

REQUEST = Message(
    API_KEY,
    "ApiVersionsRequest",
    "0-3",
    flexible="3+",
    fields=(
        f("client_software_name", STRING, "3+"),
        f("client_software_version", STRING, "3+"),
    ),
)

RESPONSE = Message(
    API_KEY,
    "ApiVersionsResponse",
    "0-3",
    flexible="3+",
    fields=(
        f("error_code", INT16),
        f(
            "api_keys",
            array(
                f("api_key", INT16),
                f("min_version", INT16),
                f("max_version", INT16),
            ),
        ),
        f("throttle_time_ms", INT32, "1+"),
        f(
            "supported_features",
            array(
                f("name", STRING, "3+"),
                f("min_version", INT16, "3+"),
                f("max_version", INT16, "3+"),
            ),
            "3+",
            tag=0,
        ),
        f("finalized_features_epoch", INT64, "3+", default=-1, tag=1),
        f(
            "finalized_features",
            array(
                f("name", STRING, "3+"),
                f("max_version_level", INT16, "3+"),
                f("min_version_level", INT16, "3+"),
            ),
            "3+",
            tag=2,
        ),
        f("zk_migration_ready", BOOL, "3+", default=False, tag=3),
    ),
)
