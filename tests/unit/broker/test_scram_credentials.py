"""SCRAM credentials from a SaltedPassword (what AlterUserScramCredentials carries) against
RFC 7677's SCRAM-SHA-256 test vector, Kafka's credential string, and the login precedence of
API-managed users over ``sasl.jaas.config`` ones."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from scramp import ScramClient

from tiered_mq.broker import scram
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.sasl import SaslConfig, SaslSession
from tiered_mq.broker.scram import ScramCredential, ScramExchange
from tiered_mq.broker.scram_credentials import (
    ScramMechanism,
    credential_from_string,
    credential_to_string,
    managed_lookup,
)
from tiered_mq.coordination.embedded import EmbeddedCoordinator
from tiered_mq.errors import SaslAuthenticationFailedError

# RFC 7677, section 3: user "user", password "pencil"
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SERVER_FIRST = (
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)
CLIENT_FINAL = (
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
SERVER_FINAL = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_credential() -> ScramCredential:
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", SALT, 4096)
    return ScramCredential.from_salted_password("SCRAM-SHA-256", SALT, salted, 4096)


def test_rfc7677_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys derived from the SaltedPassword verify the RFC's proof and give its server
    signature: the exchange reproduces the RFC's messages byte for byte."""
    monkeypatch.setattr(scram.secrets, "token_urlsafe", lambda _n: SERVER_NONCE)
    exchange = ScramExchange("SCRAM-SHA-256", {"user": rfc_credential()}.get)
    assert exchange.first(CLIENT_FIRST) == SERVER_FIRST
    assert exchange.final(CLIENT_FINAL) == SERVER_FINAL
    assert exchange.user == "user"


def test_from_salted_password_equals_derive_from_the_password() -> None:
    for mechanism, h in (("SCRAM-SHA-256", "sha256"), ("SCRAM-SHA-512", "sha512")):
        derived = ScramCredential.derive(mechanism, "secret", 8192)
        salted = hashlib.pbkdf2_hmac(h, b"secret", derived.salt, 8192)
        again = ScramCredential.from_salted_password(mechanism, derived.salt, salted, 8192)
        assert again == derived


def test_credential_string_is_kafkas() -> None:
    credential = rfc_credential()
    text = credential_to_string(credential)
    assert text == (
        "salt=W22ZaJ0SNY7soEsUEjb6gQ==,"
        f"stored_key={base64.b64encode(credential.stored_key).decode()},"
        f"server_key={base64.b64encode(credential.server_key).decode()},iterations=4096"
    )
    assert credential_from_string(text) == credential
    reordered = ",".join(reversed(text.split(",")))  # Kafka reads the keys in any order
    assert credential_from_string(reordered) == credential


@pytest.mark.parametrize(
    "text",
    [
        "",
        "salt=AA==,stored_key=AA==,server_key=AA==",  # no iterations
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=4096,extra=1",
        "salt=AA==,stored_key=AA==,server_key=AA==,salt=AA==",
        "salt=!!,stored_key=AA==,server_key=AA==,iterations=4096",
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=many",
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=0",
    ],
)
def test_malformed_credential_strings_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        credential_from_string(text)


def test_mechanism_codes_are_kafkas() -> None:
    assert ScramMechanism.from_code(1).mechanism_name == "SCRAM-SHA-256"
    assert ScramMechanism.from_code(2).mechanism_name == "SCRAM-SHA-512"
    assert ScramMechanism.from_code(3) is ScramMechanism.UNKNOWN
    assert ScramMechanism.from_name("SCRAM-SHA-512") is ScramMechanism.SCRAM_SHA_512


def _login(sasl: SaslConfig, mechanism: str, user: str, password: str) -> bool:
    session = SaslSession(sasl)
    session.handshake(mechanism)
    client = ScramClient([mechanism], user, password)
    try:
        server_first = session.authenticate(client.get_client_first().encode())
        client.set_server_first(server_first.decode())
        client.set_server_final(session.authenticate(client.get_client_final().encode()).decode())
    except SaslAuthenticationFailedError:
        return False
    return session.principal == f"User:{user}"


async def test_api_users_come_first_and_apply_to_the_next_login(tmp_path: Path) -> None:
    coordinator = EmbeddedCoordinator(tmp_path)
    await coordinator.start()
    jaas = 'x required user_alice="from-config";'
    config = BrokerConfig(tmp_path, overrides={"sasl.jaas.config": jaas})
    sasl = SaslConfig.from_config(config, managed=managed_lookup(coordinator))
    api = credential_to_string(ScramCredential.derive("SCRAM-SHA-256", "from-api"))
    assert not _login(sasl, "SCRAM-SHA-256", "bob", "bob-api")
    bob = credential_to_string(ScramCredential.derive("SCRAM-SHA-256", "bob-api"))
    await coordinator.alter_scram_credentials(
        {"alice": {"SCRAM-SHA-256": api}, "bob": {"SCRAM-SHA-256": bob}}
    )
    assert _login(sasl, "SCRAM-SHA-256", "bob", "bob-api")  # at once, no restart
    assert _login(sasl, "SCRAM-SHA-256", "alice", "from-api")  # the API credential wins
    assert not _login(sasl, "SCRAM-SHA-256", "alice", "from-config")
    assert _login(sasl, "SCRAM-SHA-512", "alice", "from-config")  # per mechanism
    assert not _login(sasl, "SCRAM-SHA-512", "bob", "bob-api")
    await coordinator.alter_scram_credentials(
        {"alice": {"SCRAM-SHA-256": None}, "bob": {"SCRAM-SHA-256": None}}
    )
    assert not _login(sasl, "SCRAM-SHA-256", "bob", "bob-api")  # deleted: refused
    assert _login(sasl, "SCRAM-SHA-256", "alice", "from-config")  # the config one again
    session = SaslSession(sasl)  # PLAIN knows only sasl.jaas.config
    session.handshake("PLAIN")
    with pytest.raises(SaslAuthenticationFailedError):
        session.authenticate(b"\0bob\0bob-api")


def test_a_scram_only_listener_may_rely_on_api_users(tmp_path: Path) -> None:
    config = BrokerConfig(tmp_path, overrides={"sasl.enabled.mechanisms": "SCRAM-SHA-512"})
    with pytest.raises(ValueError, match="needs users"):
        SaslConfig.from_config(config)
    sasl = SaslConfig.from_config(config, managed=lambda _m, _u: None)
    assert sasl.passwords == {} and sasl.mechanisms == ("SCRAM-SHA-512",)
    plain = BrokerConfig(tmp_path, overrides={"sasl.enabled.mechanisms": "PLAIN"})
    with pytest.raises(ValueError, match="needs users"):
        SaslConfig.from_config(plain, managed=lambda _m, _u: None)
