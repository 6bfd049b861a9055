"""CreateAcls (key 30), versions 0-1 (non-flexible; flexible from 2).

Each creation is one binding (codes in ``tiered_mq/broker/acl/binding.py``); v1 adds its
``resource_pattern_type`` (3 literal, 4 prefixed; v0 means literal). One result per creation.
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 30

REQUEST = Message(
    API_KEY,
    "CreateAclsRequest",
    "0-1",
    flexible="2+",
    fields=(
        f(
            "creations",
            array(
                f("resource_type", INT8),
                f("resource_name", STRING),
                f("resource_pattern_type", INT8, "1+", default=3),
                f("principal", STRING),
                f("host", STRING),
                f("operation", INT8),
                f("permission_type", INT8),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "CreateAclsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f("results", array(f("error_code", INT16), f("error_message", STRING, nullable="0+"))),
    ),
)
