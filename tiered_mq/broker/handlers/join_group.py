"""JoinGroup (11), v0-5: join (or rejoin) a group; answered when the join phase ends.

v0 carries no rebalance timeout: the session timeout stands in for it (group/membership).
v4+ clients that join with an empty member id are answered MEMBER_ID_REQUIRED with their new id
(unless static, i.e. with a group instance id, v5+) and join again with it; v0-3 clients get
their id in the final answer. The answer waits on the group's rebalance (see group/membership).
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 11


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    member_id = request.get("member_id") or ""
    if coordinator is None or not ctx.authorize(
        AclOperation.READ, ResourceType.GROUP, request["group_id"]
    ):
        code = (
            errors.CoordinatorNotAvailableError.errno
            if coordinator is None
            else errors.GroupAuthorizationFailedError.errno
        )
        return {"error_code": code, "member_id": member_id, "members": []}
    instance_id = request.get("group_instance_id")
    answer: dict[str, Any] = await coordinator.join_group(
        group_id=request["group_id"],
        member_id=member_id,
        group_instance_id=instance_id,
        client_id=ctx.header.client_id or "",
        client_host="/" + ctx.host if ctx.host else "",  # Kafka: "/127.0.0.1", no port
        session_timeout_ms=request["session_timeout_ms"],
        rebalance_timeout_ms=request.get("rebalance_timeout_ms", -1),
        protocol_type=request["protocol_type"],
        protocols=[(p["name"], bytes(p["metadata"])) for p in request.get("protocols") or []],
        require_known_member_id=ctx.header.api_version >= 4 and instance_id is None,
    )
    return {"throttle_time_ms": 0, **answer}
