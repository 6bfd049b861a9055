"""AlterConfigs (key 33), versions 0-1 (non-flexible; flexible from 2).

Replaces the whole dynamic config of each resource (IncrementalAlterConfigs edits it).
"""

from tiered_mq.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 33

REQUEST = Message(
    API_KEY,
    "AlterConfigsRequest",
    "0-1",
    flexible="2+",
    fields=(
        f(
            "resources",
            array(
                f("resource_type", INT8),
                f("resource_name", STRING),
                f("configs", array(f("name", STRING), f("value", STRING, nullable="0+"))),
            ),
        ),
        f("validate_only", BOOL),
    ),
)

RESPONSE = Message(
    API_KEY,
    "AlterConfigsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "responses",
            array(
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+"),
                f("resource_type", INT8),
                f("resource_name", STRING),
            ),
        ),
    ),
)
