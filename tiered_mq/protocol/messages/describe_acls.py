"""DescribeAcls (key 29), versions 0-1 (non-flexible; flexible from 2).

A filter over ACL bindings (codes in ``tiered_mq/broker/acl/binding.py``): ``resource_type_filter``
1 = any, a null name, principal or host matches any, ``operation`` and ``permission_type`` 1 =
any; ``pattern_type_filter`` (v1+, default 3 literal) 1 = any, 2 = every binding that applies to
the named resource. The answer groups the matching bindings by resource pattern.
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 29

# an ACL binding filter; DeleteAcls sends a list of them
FILTER_FIELDS = (
    f("resource_type_filter", INT8),
    f("resource_name_filter", STRING, nullable="0+"),
    f("pattern_type_filter", INT8, "1+", default=3),
    f("principal_filter", STRING, nullable="0+"),
    f("host_filter", STRING, nullable="0+"),
    f("operation", INT8),
    f("permission_type", INT8),
)

REQUEST = Message(
    API_KEY,
    "DescribeAclsRequest",
    "0-1",
    flexible="2+",
    fields=FILTER_FIELDS,
)

RESPONSE = Message(
    API_KEY,
    "DescribeAclsResponse",
    "0-1",
    flexible="2+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f(
            "resources",
            array(
                f("resource_type", INT8),
                f("resource_name", STRING),
                f("pattern_type", INT8, "1+", default=3),
                f(
                    "acls",
                    array(
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
