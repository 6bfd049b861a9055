"""CreateAcls (30), v0-1: add bindings, durably (store.py) before the answer.

Needs ALTER on the cluster. An invalid binding (ANY or unknown codes, a pattern type other than
literal or prefixed, a principal not ``Type:name``, a cluster not named ``kafka-cluster``) gets
INVALID_REQUEST and the others are still created, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._acls import authorizer_for, binding
from tiered_mq.broker.handlers._common import outcome
from tiered_mq.errors import KafkaError

API_KEY = 30


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    creations = request["creations"]
    try:
        authorizer = authorizer_for(ctx, AclOperation.ALTER)
    except KafkaError as refused:
        return {"throttle_time_ms": 0, "results": [outcome(refused) for _ in creations]}
    outcomes = await authorizer.create([binding(c) for c in creations])
    return {"throttle_time_ms": 0, "results": [outcome(e) for e in outcomes]}
