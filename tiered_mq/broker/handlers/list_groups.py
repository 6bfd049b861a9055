"""ListGroups (16), v0-2: every group this coordinator knows that is not Dead."""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 16


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    if coordinator is None:
        return {"error_code": errors.CoordinatorNotAvailableError.errno, "groups": []}
    code, groups = coordinator.list_groups()
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        described = AclOperation.DESCRIBE
        groups = [g for g in groups if ctx.authorize(described, ResourceType.GROUP, g.group_id)]
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "groups": [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type or "",
                "group_state": g.state.value,
            }
            for g in groups
        ],
    }
