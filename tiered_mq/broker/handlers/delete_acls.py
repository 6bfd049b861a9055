"""DeleteAcls (31), v0-1: remove the bindings each filter matches, durably, and list them.

Needs ALTER on the cluster; without an authorizer every filter gets SECURITY_DISABLED.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._acls import (
    acl_fields,
    authorizer_for,
    binding_filter,
    pattern_fields,
)
from tiered_mq.broker.handlers._common import outcome
from tiered_mq.errors import KafkaError

API_KEY = 31


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    filters = request["filters"]
    try:
        authorizer = authorizer_for(ctx, AclOperation.ALTER)
    except KafkaError as refused:
        failure = {**outcome(refused), "matching_acls": []}
        return {"throttle_time_ms": 0, "filter_results": [failure for _ in filters]}
    removed = await authorizer.delete([binding_filter(f) for f in filters])
    return {
        "throttle_time_ms": 0,
        "filter_results": [
            {
                **outcome(None),
                "matching_acls": [
                    {**outcome(None), **pattern_fields(acl.pattern), **acl_fields(acl)}
                    for acl in acls
                ],
            }
            for acls in removed
        ],
    }
