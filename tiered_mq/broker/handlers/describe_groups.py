"""DescribeGroups (15), v0-4: state, protocol and members of each group.

Member metadata and assignment bytes are filled only while the group is Stable (Kafka's rule);
an unknown group is described as Dead with no error. v3+ answers the group's authorized
operations when asked (acl/operations.py).
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.acl.operations import authorized_operations
from tiered_mq.broker.context import RequestContext

API_KEY = 15


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    described = []
    for group_id in request.get("groups") or []:
        if coordinator is None:
            code = errors.CoordinatorNotAvailableError.errno
            described.append({"error_code": code, "group_id": group_id, "members": []})
        elif not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            code = errors.GroupAuthorizationFailedError.errno
            described.append({"error_code": code, "group_id": group_id, "members": []})
        else:
            entry = coordinator.describe_group(group_id)
            if request.get("include_authorized_operations"):
                ops = authorized_operations(ctx.authorize, ResourceType.GROUP, group_id)
                entry = {**entry, "authorized_operations": ops}
            described.append(entry)
    return {"throttle_time_ms": 0, "groups": described}
