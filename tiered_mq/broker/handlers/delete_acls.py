"""DeleteAcls (31), v0-1: remove the bindings each filter matches, durably, and list them.

Needs ALTER on the cluster; without an authorizer every filter gets SECURITY_DISABLED.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._acls import acl_fields, authorizer_for, binding_filter
from tiered_mq.broker.handlers._common import error_message
from tiered_mq.errors import KafkaError

API_KEY = 31


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    filters = request["filters"]
    try:
        authorizer = authorizer_for(ctx, AclOperation.ALTER)
    except KafkaError as refused:
        failure = {
            "error_code": refused.errno,
            "error_message": error_message(refused),
            "matching_acls": [],
        }
        return {"throttle_time_ms": 0, "filter_results": [failure for _ in filters]}
    removed = await authorizer.delete([binding_filter(f) for f in filters])
    return {
        "throttle_time_ms": 0,
        "filter_results": [
            {
                "error_code": 0,
                "error_message": None,
                "matching_acls": [
                    {
                        "error_code": 0,
                        "error_message": None,
                        "resource_type": int(acl.pattern.resource_type),
                        "resource_name": acl.pattern.name,
                        "pattern_type": int(acl.pattern.pattern_type),
                        **acl_fields(acl),
                    }
                    for acl in acls
                ],
            }
            for acls in removed
        ],
    }
