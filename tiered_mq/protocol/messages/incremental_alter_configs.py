"""IncrementalAlterConfigs (key 44), versions 0-1; v1 is flexible (compact encodings).

``config_operation``: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
"""

from tiered_mq.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 44

REQUEST = Message(
    API_KEY,
    "IncrementalAlterConfigsRequest",
    "0-1",
    flexible="1+",
    fields=(
        f(
            "resources",
            array(
                f("resource_type", INT8),
                f("resource_name", STRING),
                f(
                    "configs",
                    array(
                        f("name", STRING),
                        f("config_operation", INT8),
                        f("value", STRING, nullable="0+"),
                    ),
                ),
            ),
        ),
        f("validate_only", BOOL),
    ),
)

RESPONSE = Message(
    API_KEY,
    "IncrementalAlterConfigsResponse",
    "0-1",
    flexible="1+",
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
