"""SASL on a ``SASL_PLAINTEXT://`` or ``SASL_SSL://`` listener: PLAIN and SCRAM-SHA-256/512.

Settings (Kafka's names)::

    sasl.enabled.mechanisms  PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 (a subset; Kafka's GSSAPI and
                             OAUTHBEARER are not implemented)
    sasl.jaas.config         the users, in the syntax of Kafka's PlainLoginModule:
                             org.apache.kafka.common.security.plain.PlainLoginModule required
                                 user_alice="alice-secret" user_bob="bob-secret";
                             (sensitive: DescribeConfigs shows it as null)

SCRAM users come from two places. As in Kafka, from the cluster metadata: users created with
AlterUserScramCredentials (``kafka-configs --alter --add-config SCRAM-SHA-256=[...]``), kept by
the coordinator (broker/scram_credentials.py). And each user of ``sasl.jaas.config`` gets SCRAM
credentials salted at start-up with 4096 iterations (Kafka's minimum; scram.py). At login the
API-managed credential of a user and mechanism comes first, the ``sasl.jaas.config`` one is the
fallback. PLAIN knows only ``sasl.jaas.config`` users. A listener without ``sasl.jaas.config``
users is a config error (ValueError) unless it enables only SCRAM mechanisms and has the
API-managed users.

Exchange (KIP-152): ApiVersions, then SaslHandshake v1 names the mechanism, then
SaslAuthenticate requests carry the tokens (after SaslHandshake v0 the tokens are bare
size-prefixed frames both ways, and a failure just closes the connection): one round for
PLAIN (``authzid NUL user NUL password``; an authzid must equal the user), two for SCRAM
(client-first -> server-first, client-final -> server-final). Until it succeeds a connection
may send nothing else; any other request closes it, and so does, after its answer, a mechanism
that is not enabled (UNSUPPORTED_SASL_MECHANISM) or a request out of turn (ILLEGAL_SASL_STATE),
as Kafka's. A failed authentication is answered
SASL_AUTHENTICATION_FAILED and the connection is closed after the answer, as Kafka does; the
broker logs why (never a password or token). Passwords are compared in constant time; with
PLAIN an unknown user fails exactly like a wrong password (with SCRAM, as in Kafka, already at
the first round).
"""

from __future__ import annotations

import hmac
import logging
import re
from dataclasses import dataclass, field
from typing import Final

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.listener import setting
from tiered_mq.broker.scram import ScramCredential, ScramExchange
from tiered_mq.broker.scram_credentials import ManagedLookup
from tiered_mq.errors import (
    IllegalSaslStateError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)

log = logging.getLogger(__name__)

PLAIN: Final = "PLAIN"
SCRAM_MECHANISMS: Final = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SUPPORTED: Final = (PLAIN, *SCRAM_MECHANISMS)
_USER: Final = re.compile(r'\buser_([^\s="]+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class SaslConfig:
    mechanisms: tuple[str, ...]
    passwords: dict[str, str]
    scram: dict[str, dict[str, ScramCredential]] = field(default_factory=dict)  # mech -> user ->
    managed: ManagedLookup | None = None  # the API-managed SCRAM credentials, looked up first

    @classmethod
    def from_config(
        cls, config: BrokerConfig, listener: str = "", managed: ManagedLookup | None = None
    ) -> SaslConfig:
        """The SASL settings of ``listener`` (per-listener and per-mechanism overrides:
        listener.setting). Its users are every ``user_NAME`` of the ``sasl.jaas.config``
        settings that apply to it, and each enabled mechanism accepts each of them; SCRAM
        mechanisms also accept the users of ``managed``."""
        key, names = setting(config, listener, "sasl.enabled.mechanisms")
        mechanisms = tuple(m.strip().upper() for m in names.split(",") if m.strip())
        unknown = [m for m in mechanisms if m not in SUPPORTED]
        if not mechanisms or unknown:
            raise ValueError(f"{key}={names!r}: supported are {', '.join(SUPPORTED)}")
        jaas = {setting(config, listener, "sasl.jaas.config", m)[1] for m in mechanisms}
        passwords = {
            user: password.replace('\\"', '"')
            for text in sorted(jaas)
            for user, password in _USER.findall(text)
        }
        if not passwords and (managed is None or PLAIN in mechanisms):
            raise ValueError(
                f"SASL listener {listener or '(default)'} needs users: sasl.jaas.config with "
                'user_NAME="..." (or listener.name.<listener>[.<mechanism>].sasl.jaas.config)'
            )
        scram = {
            m: {u: ScramCredential.derive(m, p) for u, p in passwords.items()}
            for m in mechanisms
            if m in SCRAM_MECHANISMS
        }
        return cls(mechanisms, passwords, scram, managed)

    def scram_credential(self, mechanism: str, user: str) -> ScramCredential | None:
        """The credential a SCRAM login of ``user`` checks: the API-managed one, else the one
        from ``sasl.jaas.config``."""
        found = self.managed(mechanism, user) if self.managed is not None else None
        return found or self.scram[mechanism].get(user)


class SaslSession:
    """One connection's authentication: SaslHandshake, then SaslAuthenticate rounds."""

    def __init__(self, config: SaslConfig) -> None:
        self.config = config
        self.mechanism: str | None = None
        self.principal: str | None = None  # "User:<name>" once authenticated
        self.failed = False  # the connection closes after the failure's answer
        self.raw_tokens = False  # SaslHandshake v0: the next frames are bare tokens
        self._scram: ScramExchange | None = None

    @property
    def authenticated(self) -> bool:
        return self.principal is not None

    def handshake(self, mechanism: str, *, raw_tokens: bool = False) -> None:
        """SaslHandshake: choose the mechanism (UnsupportedSaslMechanismError if not enabled);
        ``raw_tokens`` (v0): the tokens follow as bare frames. Before authentication every
        refusal marks the session failed: the connection closes after the answer, as Kafka's
        (after it, IllegalSaslStateError is only answered)."""
        if self.authenticated:
            raise IllegalSaslStateError("SaslHandshake after authentication")
        if self.mechanism is not None:
            self.failed = True
            raise IllegalSaslStateError("SaslHandshake during SASL authentication")
        if mechanism not in self.config.mechanisms:
            self.failed = True
            raise UnsupportedSaslMechanismError(f"mechanism {mechanism} is not enabled")
        self.mechanism = mechanism
        self.raw_tokens = raw_tokens

    def authenticate(self, token: bytes) -> bytes:
        """One SaslAuthenticate round: the server's token (b"" when none). Raises
        SaslAuthenticationFailedError (and marks the session failed) on bad credentials, and
        IllegalSaslStateError without a handshake (failed too) or after authentication."""
        if self.authenticated:
            raise IllegalSaslStateError("SaslAuthenticate after authentication")
        if self.mechanism is None:
            self.failed = True
            raise IllegalSaslStateError("SaslAuthenticate without a pending handshake")
        try:
            if self.mechanism == PLAIN:
                self.principal = f"User:{self._plain(token)}"
                return b""
            return self._scram_round(token)
        except (SaslAuthenticationFailedError, UnicodeDecodeError, ValueError) as e:
            why = "token is not UTF-8" if isinstance(e, UnicodeDecodeError) else e
            log.info("SASL %s authentication failed: %s", self.mechanism, why)
            self.failed = True
            raise SaslAuthenticationFailedError(
                f"Authentication failed: invalid credentials with SASL mechanism {self.mechanism}"
            ) from None

    def _plain(self, token: bytes) -> str:
        authzid, user, password = token.decode().split("\0")
        if authzid and authzid != user:
            raise SaslAuthenticationFailedError("authorization id differs from the user")
        expected = self.config.passwords.get(user)
        # an unknown user is compared against itself: the same work, the same answer
        ok = hmac.compare_digest((expected or password).encode(), password.encode())
        if expected is None or not ok:
            raise SaslAuthenticationFailedError("bad credentials")
        return user

    def _scram_round(self, token: bytes) -> bytes:
        assert self.mechanism is not None
        if self._scram is None:
            mechanism = self.mechanism
            self._scram = ScramExchange(
                mechanism, lambda user: self.config.scram_credential(mechanism, user)
            )
            return self._scram.first(token.decode()).encode()
        final = self._scram.final(token.decode())
        self.principal = f"User:{self._scram.user}"
        return final.encode()
