"""FindCoordinator (10), v0-2: this broker coordinates every group.

key_type 0 (group) and 1 (transaction) are both answered with this broker's node id, advertised
host and port (the transaction handlers then answer for themselves); any other key type is
INVALID_REQUEST. Until the group coordinator has loaded ``__consumer_offsets`` the answer is
COORDINATOR_NOT_AVAILABLE, which clients retry. The empty group id has a coordinator too, as in
Kafka: OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups serve it (Java consumers
before 2.2 committed under ``group.id=""``); only the membership APIs refuse it. A group whose
partition of ``__consumer_offsets`` is offline after a storage failure is answered
COORDINATOR_NOT_AVAILABLE too (Kafka: the partition has no leader once its log directory
failed; see broker/group/store_failures.py), so that its clients back off.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext

API_KEY = 10

GROUP, TRANSACTION = 0, 1


def _error(code: int, message: str) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "node_id": -1, "host": "", "port": -1}


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    key_type = request.get("key_type", GROUP)
    if key_type not in (GROUP, TRANSACTION):
        return _error(errors.InvalidRequestError.errno, f"unknown key type {key_type}")
    coordinator = ctx.broker.group_coordinator
    if key_type == GROUP and (coordinator is None or not coordinator.loaded):
        return _error(errors.CoordinatorNotAvailableError.errno, "group coordinator loading")
    key = request.get("key") or ""
    if key_type == GROUP and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return _error(errors.GroupAuthorizationFailedError.errno, f"group {key}")
    if key_type == TRANSACTION and not ctx.authorize(
        AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key
    ):
        code = errors.TransactionalIdAuthorizationFailedError.errno
        return _error(code, f"transactional id {key}")
    if key_type == GROUP and coordinator is not None and not coordinator.available(key):
        message = "the group's partition of __consumer_offsets is offline (storage failure)"
        return _error(errors.CoordinatorNotAvailableError.errno, message)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "node_id": ctx.broker.config.node_id,
        "host": ctx.endpoint[0],
        "port": ctx.endpoint[1],
    }
