"""AlterUserScramCredentials (51), v0: create, replace and delete SCRAM credentials of users.

Needs ALTER on the cluster; without it every user of the request gets
CLUSTER_AUTHORIZATION_FAILED, as in Kafka. Otherwise, per user (Kafka's rules, checked in
request order, deletions before upsertions; the first error of a user is its answer):

- a user named by more than one deletion or upsertion: DUPLICATE_RESOURCE (one credential
  change per user and request, as in Kafka's KRaft controller);
- an empty name: UNACCEPTABLE_CREDENTIAL; a mechanism other than 1 (SCRAM-SHA-256) or 2
  (SCRAM-SHA-512): UNSUPPORTED_SASL_MECHANISM;
- a deletion of a credential the user does not have: RESOURCE_NOT_FOUND;
- an upsertion with fewer than 4096 or more than 16384 iterations: UNACCEPTABLE_CREDENTIAL.

The valid changes are written together, in one durable coordinator write (embedded: one atomic
file rewrite; ZooKeeper: one multi-op) before the answer: a credential acknowledged is stored,
and a crash before the answer leaves all of them or none. If that write fails (ZooKeeper
unreachable: REQUEST_TIMED_OUT) each of those users gets the error. From an upsertion's salt and
SaltedPassword the broker keeps the salt, StoredKey and ServerKey (scram.py), never the
SaltedPassword. Results: successful users first (deletions, then upsertions, in request order),
then the failed ones.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import outcome
from tiered_mq.broker.scram import ScramCredential
from tiered_mq.broker.scram_credentials import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramMechanism,
    credential_to_string,
)
from tiered_mq.errors import (
    ClusterAuthorizationFailedError,
    DuplicateResourceError,
    ResourceNotFoundError,
    UnacceptableCredentialError,
    UnsupportedSaslMechanismError,
)
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS


def _mechanism(user: str, code: int) -> str:
    """The mechanism's name, once the user name and mechanism are acceptable."""
    if not user:
        raise UnacceptableCredentialError("Username must not be empty")
    mechanism = ScramMechanism.from_code(code)
    if mechanism is ScramMechanism.UNKNOWN:
        raise UnsupportedSaslMechanismError("Unknown SCRAM mechanism")
    return mechanism.mechanism_name


def _deletion(ctx: RequestContext, deletion: dict[str, Any]) -> tuple[str, None]:
    user = deletion["name"]
    name = _mechanism(user, deletion["mechanism"])
    if name not in ctx.broker.coordinator.scram_credentials(user):
        raise ResourceNotFoundError("Attempt to delete a user credential that does not exist")
    return name, None


def _upsertion(upsertion: dict[str, Any]) -> tuple[str, str]:
    name = _mechanism(upsertion["name"], upsertion["mechanism"])
    iterations = upsertion["iterations"]
    if iterations < MIN_ITERATIONS:
        raise UnacceptableCredentialError("Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise UnacceptableCredentialError("Too many iterations")
    credential = ScramCredential.from_salted_password(
        name, bytes(upsertion["salt"]), bytes(upsertion["salted_password"]), iterations
    )
    return name, credential_to_string(credential)


def _result(user: str, error: Exception | None = None) -> dict[str, Any]:
    return {"user": user, **outcome(error)}


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    deletions, upsertions = request["deletions"], request["upsertions"]
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        refused = ClusterAuthorizationFailedError(f"{ctx.principal} may not ALTER the cluster")
        users = sorted({op["name"] for op in (*deletions, *upsertions)})
        return {"throttle_time_ms": 0, "results": [_result(u, refused) for u in users]}
    changes: dict[str, tuple[str, str | None]] = {}  # user -> (mechanism, credential or None)
    failed: dict[str, Exception] = {}
    for op, is_deletion in [(d, True) for d in deletions] + [(u, False) for u in upsertions]:
        user = op["name"]
        if user in failed:
            continue
        if changes.pop(user, None) is not None:
            failed[user] = DuplicateResourceError(
                "A user credential cannot be altered twice in the same request"
            )
            continue
        try:
            changes[user] = _deletion(ctx, op) if is_deletion else _upsertion(op)
        except Exception as e:
            failed[user] = e
    if changes:
        try:
            await ctx.broker.coordinator.alter_scram_credentials(
                {user: {mechanism: credential} for user, (mechanism, credential) in changes.items()}
            )
        except Exception as e:
            failed.update(dict.fromkeys(changes, e))
            changes.clear()
    results = [_result(user) for user in changes] + [_result(u, e) for u, e in failed.items()]
    return {"throttle_time_ms": 0, "results": results}
