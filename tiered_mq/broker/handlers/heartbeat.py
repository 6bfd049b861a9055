"""Heartbeat (12), v0-3: keeps a member's session alive; REBALANCE_IN_PROGRESS asks it to rejoin."""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 12


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    if coordinator is None:
        return {"error_code": errors.CoordinatorNotAvailableError.errno}
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request["group_id"]):
        return {"error_code": errors.GroupAuthorizationFailedError.errno}
    code: int = coordinator.heartbeat(
        request["group_id"],
        request["generation_id"],
        request["member_id"],
        request.get("group_instance_id"),
    )
    return {"throttle_time_ms": 0, "error_code": code}
