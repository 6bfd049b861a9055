"""ListTransactions (66), v0-2: the transactional ids the coordinator knows, with their state.

Each entry carries the transactional id, producer id and state (Kafka's spelling, as in
DescribeTransactions). Dead ids are never listed. Filters, all optional and combined:

- ``state_filters``: only these states; names Kafka does not know are echoed back in
  ``unknown_state_filters`` (and match nothing);
- ``producer_id_filters``: only these producer ids;
- ``duration_filter`` (v1+, -1: off): only transactions whose start time is more than that many
  milliseconds ago. As in Kafka this compares against the start of the current or last
  transaction, so a completed transaction that started long ago matches, and so does an id
  that never started one (start time -1);
- ``transactional_id_pattern`` (v2+, null or empty: off): a regular expression the whole id
  must match (Python's ``re`` dialect, close to Java's for ordinary patterns).

Ids the principal may not DESCRIBE are left out, without an error (Kafka's rule).
Errors (top level): COORDINATOR_LOAD_IN_PROGRESS while ``__transaction_state`` loads,
COORDINATOR_NOT_AVAILABLE without a coordinator, INVALID_REGULAR_EXPRESSION for a pattern
that does not compile.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.broker.handlers._txn import coordinator
from tiered_mq.broker.txn.coordinator import now_ms, state_from_name, state_name
from tiered_mq.broker.txn.state import TxnMetadata, TxnState
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.LIST_TRANSACTIONS


def matches(
    meta: TxnMetadata,
    states: Collection[TxnState] | None,
    producer_ids: Collection[int],
    duration_ms: int,
    pattern: re.Pattern[str] | None,
    now: int,
) -> bool:
    """Whether ``meta`` passes every filter (``states`` None: no state filter)."""
    if states is not None and meta.state not in states:
        return False
    if producer_ids and meta.producer_id not in producer_ids:
        return False
    if duration_ms >= 0 and now - meta.start_ms <= duration_ms:
        return False
    return pattern is None or pattern.fullmatch(meta.transactional_id) is not None


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "unknown_state_filters": [],
        "transaction_states": [],
    }
    try:
        txns = coordinator(ctx).list_txns()
    except Exception as e:
        response["error_code"] = error_code(e)
        return response
    names = request["state_filters"]
    states = {s for s in map(state_from_name, names) if s is not None} if names else None
    unknown = [n for n in names if state_from_name(n) is None]
    response["unknown_state_filters"] = list(dict.fromkeys(unknown))
    pattern = None
    if request.get("transactional_id_pattern"):
        try:
            pattern = re.compile(request["transactional_id_pattern"])
        except re.error:
            response["error_code"] = errors.InvalidRegularExpressionError.errno
            return response
    producer_ids = set(request["producer_id_filters"])
    duration_ms = request.get("duration_filter", -1)
    now = now_ms()
    describe = AclOperation.DESCRIBE
    response["transaction_states"] = [
        {
            "transactional_id": m.transactional_id,
            "producer_id": m.producer_id,
            "transaction_state": state_name(m.state),
        }
        for m in txns
        if matches(m, states, producer_ids, duration_ms, pattern, now)
        and ctx.authorize(describe, ResourceType.TRANSACTIONAL_ID, m.transactional_id)
    ]
    return response
