"""SyncGroup (14), v0-3: the leader hands in the assignment; every member gets its share."""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 14


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    if coordinator is None:
        return {"error_code": errors.CoordinatorNotAvailableError.errno, "assignment": b""}
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request["group_id"]):
        return {"error_code": errors.GroupAuthorizationFailedError.errno, "assignment": b""}
    assignments = {a["member_id"]: bytes(a["assignment"]) for a in request.get("assignments") or []}
    answer: dict[str, Any] = await coordinator.sync_group(
        request["group_id"],
        request["generation_id"],
        request["member_id"],
        request.get("group_instance_id"),
        assignments,
    )
    return {"throttle_time_ms": 0, **answer}
