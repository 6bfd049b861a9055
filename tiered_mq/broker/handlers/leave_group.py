"""LeaveGroup (13), v0-3: v0-2 remove one ``member_id``; v3 a batch of ``members``, each with
its own error code (static members may be named by group instance id alone)."""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 13


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    v3 = ctx.header.api_version >= 3
    if v3:
        leaving = [
            (m.get("member_id") or "", m.get("group_instance_id")) for m in request["members"]
        ]
    else:
        leaving = [(request["member_id"], None)]
    if coordinator is None:
        return {"error_code": errors.CoordinatorNotAvailableError.errno, "members": []}
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request["group_id"]):
        return {"error_code": errors.GroupAuthorizationFailedError.errno, "members": []}
    top, codes = coordinator.leave_group(request["group_id"], leaving)
    if not v3:
        return {"throttle_time_ms": 0, "error_code": top or (codes[0] if codes else 0)}
    members = [
        {"member_id": mid, "group_instance_id": iid, "error_code": code}
        for (mid, iid), code in zip(leaving, codes, strict=False)
    ]
    return {"throttle_time_ms": 0, "error_code": top, "members": members}
