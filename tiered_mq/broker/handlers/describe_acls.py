"""DescribeAcls (29), v0-1: the bindings a filter matches, grouped by resource pattern.

Needs DESCRIBE on the cluster; without an authorizer the answer is SECURITY_DISABLED.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation, ResourcePattern
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._acls import (
    acl_fields,
    authorizer_for,
    binding_filter,
    pattern_fields,
)
from tiered_mq.broker.handlers._common import outcome
from tiered_mq.errors import KafkaError

API_KEY = 29


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    try:
        authorizer = authorizer_for(ctx, AclOperation.DESCRIBE)
    except KafkaError as refused:
        return {"throttle_time_ms": 0, **outcome(refused), "resources": []}
    grouped: dict[ResourcePattern, list[dict[str, Any]]] = {}
    for acl in authorizer.describe(binding_filter(request)):
        grouped.setdefault(acl.pattern, []).append(acl_fields(acl))
    return {
        "throttle_time_ms": 0,
        **outcome(None),
        "resources": [{**pattern_fields(p), "acls": acls} for p, acls in grouped.items()],
    }
