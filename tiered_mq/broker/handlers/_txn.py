"""Helpers of the transactional handlers (not a handler: the underscore keeps discovery away).

Every transactional API is served by the transaction coordinator (broker/txn/coordinator.py);
it raises Kafka errors, which the handlers turn into error codes. Until the coordinator has
loaded ``__transaction_state`` (or on a broker without one) the answer is
COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE, which clients retry.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.context import RequestContext


def coordinator(ctx: RequestContext) -> Any:
    tc = getattr(ctx.broker, "txn_coordinator", None)
    if tc is None:
        raise errors.CoordinatorNotAvailableError("no transaction coordinator")
    return tc
