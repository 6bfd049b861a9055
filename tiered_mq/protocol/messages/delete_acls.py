"""DeleteAcls (key 31), versions 0-1 (non-flexible; flexible from 2).

Each filter is a DescribeAcls filter (see describe_acls.py); its result lists the bindings it
matched and deleted.
"""

from tiered_mq.protocol.messages.describe_acls import FILTER_FIELDS
from tiered_mq.protocol.schema import INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 31

REQUEST = Message(
    API_KEY,
    "DeleteAclsRequest",
    "0-1",
    flexible="2+",
    fields=(f("filters", array(*FILTER_FIELDS)),),
)

RESPONSE = Message(
    API_KEY,
    "DeleteAclsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "filter_results",
            array(
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+"),
                f(
                    "matching_acls",
                    array(
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f("pattern_type", INT8, "1+", default=3),
                        f("principal", STRING),
                        f("host", STRING),
                        f("operation", INT8),
                        f("permission_type", INT8),
                    ),
                ),
            ),
        ),
    ),
)
