"""DeleteGroups (42), v0-1: delete empty groups and their committed offsets (tombstones).

A group with members answers NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 42


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    names: list[str] = list(request.get("groups_names") or [])
    if coordinator is None:
        codes = dict.fromkeys(names, errors.CoordinatorNotAvailableError.errno)
    else:
        allowed = [n for n in names if ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, n)]
        codes = dict.fromkeys(names, errors.GroupAuthorizationFailedError.errno)
        codes.update(await coordinator.delete_groups(allowed))
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": name, "error_code": codes[name]} for name in names],
    }
