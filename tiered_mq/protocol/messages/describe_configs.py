"""DescribeConfigs (key 32), versions 1-3 (non-flexible; flexible from 4).

``resource_type``: 2 = topic, 4 = broker. A null ``configuration_keys`` asks for every config.
``config_source`` (v1+): 1 dynamic topic, 4 static broker, 5 default, -1 unknown.
"""

from tiered_mq.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 32

REQUEST = Message(
    API_KEY,
    "DescribeConfigsRequest",
    "1-3",
    flexible="4+",
    fields=(
        f(
            "resources",
            array(
                f("resource_type", INT8),
                f("resource_name", STRING),
                f("configuration_keys", array(STRING), nullable="0+"),
            ),
        ),
        f("include_synonyms", BOOL, "1+", default=False),
        f("include_documentation", BOOL, "3+", default=False),
    ),
)

RESPONSE = Message(
    API_KEY,
    "DescribeConfigsResponse",
    "1-3",
    flexible="4+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+"),
                f("resource_type", INT8),
                f("resource_name", STRING),
                f(
                    "configs",
                    array(
                        f("name", STRING),
                        f("value", STRING, nullable="0+"),
                        f("read_only", BOOL),
                        f("config_source", INT8, "1+", default=-1),
                        f("is_default", BOOL, "0"),
                        f("is_sensitive", BOOL),
                        f(
                            "synonyms",
                            array(
                                f("name", STRING, "1+"),
                                f("value", STRING, "1+", nullable="0+"),
                                f("source", INT8, "1+"),
                            ),
                            "1+",
                        ),
                        f("config_type", INT8, "3+", default=0),
                        f("documentation", STRING, "3+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)
