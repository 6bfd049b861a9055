"""Helpers of the transactional handlers (not a handler: the underscore keeps discovery away).

Every transactional API is served by the transaction coordinator (broker/txn/coordinator.py);
it raises Kafka errors, which the handlers turn into error codes. Until the coordinator has
loaded ``__transaction_state`` (or on a broker without one) the answer is
COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE, which clients retry.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require


def coordinator(ctx: RequestContext) -> Any:
    tc = getattr(ctx.broker, "txn_coordinator", None)
    if tc is None:
        raise errors.CoordinatorNotAvailableError("no transaction coordinator")
    return tc


def require_txn_id(ctx: RequestContext, transactional_id: str) -> None:
    """TRANSACTIONAL_ID_AUTHORIZATION_FAILED unless the principal may WRITE the id."""
    require(
        ctx,
        AclOperation.WRITE,
        ResourceType.TRANSACTIONAL_ID,
        transactional_id,
        errors.TransactionalIdAuthorizationFailedError,
    )


def require_group(ctx: RequestContext, group_id: str) -> None:
    """GROUP_AUTHORIZATION_FAILED unless the principal may READ the group."""
    denied = errors.GroupAuthorizationFailedError
    require(ctx, AclOperation.READ, ResourceType.GROUP, group_id, denied)


FENCED_MIN_VERSION = 2  # AddPartitionsToTxn, AddOffsetsToTxn, EndTxn: PRODUCER_FENCED from v2


def txn_error_code(ctx: RequestContext, e: Exception) -> int:
    """``error_code(e)`` as the request's version says it: a producer fenced by a newer epoch
    (the coordinator raises INVALID_PRODUCER_EPOCH, which every version knows) is
    PRODUCER_FENCED from v2 of AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, as Kafka's
    KafkaApis answers it (older versions predate the code, KIP-588)."""
    code = error_code(e)
    if code == errors.InvalidProducerEpochError.errno and ctx.api_version >= FENCED_MIN_VERSION:
        return errors.ProducerFencedError.errno
    return code
