"""ListGroups (16), v0-5: every group this coordinator knows that is not Dead.

From v4 each group comes with its state (Kafka's names: Empty, PreparingRebalance,
CompletingRebalance, Stable) and the request may name the states to list; from v5 each group
comes with its type and the request may name the types to list. Every group here is a
``classic`` one (KIP-848's ``consumer`` groups are not served). An empty filter lists all.
Both filters match case-insensitively, as Kafka's GroupMetadataManager.listGroups does (a
state name is also stripped of surrounding blanks there; a type name is not). An unknown name
matches nothing.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.group.group import GroupMetadata

API_KEY = 16

CLASSIC = "classic"  # the type of every group a classic (JoinGroup/SyncGroup) coordinator holds


def _wanted(groups: list[GroupMetadata], request: dict[str, Any]) -> list[GroupMetadata]:
    states = {s.strip().lower() for s in request.get("states_filter") or ()}
    types = {t.lower() for t in request.get("types_filter") or ()}
    if types and CLASSIC not in types:
        return []
    if states:
        return [g for g in groups if g.state.value.lower() in states]
    return groups


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    if coordinator is None:
        return {"error_code": errors.CoordinatorNotAvailableError.errno, "groups": []}
    code, groups = coordinator.list_groups()
    groups = _wanted(groups, request)
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
                "group_type": CLASSIC,
            }
            for g in groups
        ],
    }
