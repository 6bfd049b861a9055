"""DescribeUserScramCredentials (50), v0: the mechanisms and iterations of SCRAM users.

``users`` null or empty lists every user with an API-managed credential
(scram_credentials.py); the ``sasl.jaas.config`` users are not listed (they live in the broker's
config, not in the cluster metadata). One result per distinct user named: a user named twice
gets DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND. Salts and keys never
leave the broker.

Needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED. Kafka answers it at the top
level with no results. librdkafka (2.16, confluent-kafka) reports that error and then aborts
the process (a bad free), so when users are named the error goes into each user's result
instead, with the top level at 0. Java and kafka-python then fail each user's future in the
same way. Only a refused "all users" request still gets Kafka's top-level error, because there
is no user to carry it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import outcome
from tiered_mq.broker.scram_credentials import ScramMechanism, credential_from_string
from tiered_mq.errors import (
    ClusterAuthorizationFailedError,
    DuplicateResourceError,
    ResourceNotFoundError,
)
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS
_MECHANISMS = (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)


def _credential_infos(ctx: RequestContext, user: str) -> list[dict[str, int]]:
    stored = ctx.broker.coordinator.scram_credentials(user)
    infos = []
    for mechanism in _MECHANISMS:
        text = stored.get(mechanism.mechanism_name)
        if text is not None:
            iterations = credential_from_string(text).iterations
            infos.append({"mechanism": int(mechanism), "iterations": iterations})
    if not infos:
        raise ResourceNotFoundError(
            f"Attempt to describe a user credential that does not exist: {user}"
        )
    return infos


def _result(ctx: RequestContext, user: str, times_named: int) -> dict[str, Any]:
    try:
        if times_named > 1:
            raise DuplicateResourceError(
                "Cannot describe SCRAM credentials for the same user twice in a single "
                f"request: {user}"
            )
        return {"user": user, **outcome(None), "credential_infos": _credential_infos(ctx, user)}
    except Exception as e:  # KafkaError, or a stored credential that does not parse
        return {"user": user, **outcome(e), "credential_infos": []}


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, **outcome(None)}
    named = [u["name"] for u in request["users"] or []]
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        refused = ClusterAuthorizationFailedError(f"{ctx.principal} may not DESCRIBE the cluster")
        if not named:
            return {**answer, **outcome(refused)}
        results = [
            {"user": u, **outcome(refused), "credential_infos": []} for u in dict.fromkeys(named)
        ]
        return {**answer, "results": results}
    users = Counter(named or ctx.broker.coordinator.scram_users())
    return {**answer, "results": [_result(ctx, user, n) for user, n in users.items()]}
