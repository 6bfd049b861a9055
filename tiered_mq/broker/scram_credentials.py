"""SCRAM users managed through the Kafka API (AlterUserScramCredentials): mechanism codes,
Kafka's credential string, and the lookup the SCRAM authenticator uses.

Mechanisms on the wire (Kafka's ``ScramMechanism``): 0 UNKNOWN, 1 SCRAM-SHA-256,
2 SCRAM-SHA-512. An upsertion must use between 4096 and 16384 iterations (Kafka's bounds for
both mechanisms).

Credential string (Kafka's ``ScramCredentialUtils``; the value of the mechanism's key in a
user's config, ``/config/users/<user>`` in ZooKeeper)::

    salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>

standard base64 with padding; exactly these four keys, in any order when read. Only the salt
and the derived keys are kept, never a password or the SaltedPassword (scram.py shows how the
keys derive from it).

Precedence at login (:func:`managed_lookup` with the static users of ``sasl.jaas.config``,
sasl.py): for a user and mechanism, the credential stored through the API wins; the one
derived from ``sasl.jaas.config`` at start is the fallback. Deleting an API credential of a user
that ``sasl.jaas.config`` also lists therefore leaves the config one in force. Lookups read the
coordinator's in-memory view on every login, so an API change applies to the next connection;
connections already authenticated are not closed (as in Kafka).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable
from enum import IntEnum
from typing import Final

from tiered_mq.broker.scram import ScramCredential
from tiered_mq.coordination.base import Coordinator

log = logging.getLogger(__name__)

MIN_ITERATIONS: Final = 4096
MAX_ITERATIONS: Final = 16384
_KEYS: Final = ("salt", "stored_key", "server_key", "iterations")

# (mechanism name, user) -> the API-managed credential, None when there is none
ManagedLookup = Callable[[str, str], ScramCredential | None]


class ScramMechanism(IntEnum):
    """Kafka's codes for SCRAM mechanisms (``mechanism`` in the SCRAM admin APIs)."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @classmethod
    def from_code(cls, code: int) -> ScramMechanism:
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism:
        return next((m for m in cls if m.mechanism_name == name), cls.UNKNOWN)

    @property
    def mechanism_name(self) -> str:
        """``SCRAM-SHA-256`` etc. (the SASL name and the key in a user's config)."""
        return self.name.replace("_", "-")


def credential_to_string(credential: ScramCredential) -> str:
    """Kafka's credential string (module docstring)."""
    b64 = base64.b64encode
    return (
        f"salt={b64(credential.salt).decode()},stored_key={b64(credential.stored_key).decode()},"
        f"server_key={b64(credential.server_key).decode()},iterations={credential.iterations}"
    )


def credential_from_string(text: str) -> ScramCredential:
    """Parse Kafka's credential string; ValueError unless it has exactly the four keys."""
    pairs = [part.split("=", 1) for part in text.split(",")]
    props = {p[0]: p[1] for p in pairs if len(p) == 2}
    if len(pairs) != len(_KEYS) or sorted(props) != sorted(_KEYS):
        raise ValueError("not a SCRAM credential string")
    try:
        salt, stored, server = (
            base64.b64decode(props[k], validate=True) for k in ("salt", "stored_key", "server_key")
        )
    except binascii.Error as e:
        raise ValueError(f"bad base64 in a SCRAM credential: {e}") from None
    iterations = int(props["iterations"])
    if iterations <= 0:
        raise ValueError("SCRAM iterations must be positive")
    return ScramCredential(salt, stored, server, iterations)


def managed_lookup(coordinator: Coordinator) -> ManagedLookup:
    """Credentials from the coordinator's view (the API-managed users). A stored string that
    does not parse (a znode edited by hand) counts as no credential, with a warning."""

    def lookup(mechanism: str, user: str) -> ScramCredential | None:
        text = coordinator.scram_credentials(user).get(mechanism)
        if text is None:
            return None
        try:
            return credential_from_string(text)
        except ValueError as e:
            log.warning("ignoring the stored %s credential of user %r: %s", mechanism, user, e)
            return None

    return lookup
