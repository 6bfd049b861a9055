"""SASL sessions: PLAIN and SCRAM exchanges, the failures, and the settings' errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scramp import ScramClient

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.sasl import SaslConfig, SaslSession
from tiered_mq.errors import (
    IllegalSaslStateError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_alice="alice-secret" user_bob="b\\"ob";'
)


@pytest.fixture(scope="module")
def sasl(tmp_path_factory: pytest.TempPathFactory) -> SaslConfig:
    config = BrokerConfig(tmp_path_factory.mktemp("b"), overrides={"sasl.jaas.config": JAAS})
    return SaslConfig.from_config(config)


def test_users_come_from_the_jaas_config(sasl: SaslConfig) -> None:
    assert sasl.passwords == {"alice": "alice-secret", "bob": 'b"ob'}
    assert sasl.mechanisms == ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def test_plain(sasl: SaslConfig) -> None:
    session = SaslSession(sasl)
    session.handshake("PLAIN")
    assert not session.authenticated
    assert session.authenticate(b"\0alice\0alice-secret") == b""
    assert session.principal == "User:alice"
    with pytest.raises(IllegalSaslStateError):
        session.authenticate(b"\0alice\0alice-secret")


@pytest.mark.parametrize(
    "token",
    [
        b"\0alice\0wrong",
        b"\0mallory\0alice-secret",  # unknown user: the same failure
        b"bob\0alice\0alice-secret",  # authorization id other than the user
        b"alice-secret",  # not a PLAIN message
        b"\0alice\0\xff",
    ],
)
def test_plain_failures(sasl: SaslConfig, token: bytes) -> None:
    session = SaslSession(sasl)
    session.handshake("PLAIN")
    with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials"):
        session.authenticate(token)
    assert session.failed and not session.authenticated


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram(sasl: SaslConfig, mechanism: str) -> None:
    session = SaslSession(sasl)
    session.handshake(mechanism)
    client = ScramClient([mechanism], "bob", 'b"ob')
    server_first = session.authenticate(client.get_client_first().encode())
    client.set_server_first(server_first.decode())
    server_final = session.authenticate(client.get_client_final().encode())
    client.set_server_final(server_final.decode())  # the client checks the server's proof
    assert session.principal == "User:bob"


@pytest.mark.parametrize(("user", "password"), [("bob", "wrong"), ("mallory", "x")])
def test_scram_failures(sasl: SaslConfig, user: str, password: str) -> None:
    session = SaslSession(sasl)
    session.handshake("SCRAM-SHA-256")
    client = ScramClient(["SCRAM-SHA-256"], user, password)
    with pytest.raises(SaslAuthenticationFailedError):
        server_first = session.authenticate(client.get_client_first().encode())
        client.set_server_first(server_first.decode())
        session.authenticate(client.get_client_final().encode())
    assert session.failed and not session.authenticated


def test_handshake_rules(tmp_path: Path) -> None:
    only_plain = SaslConfig.from_config(
        BrokerConfig(
            tmp_path, overrides={"sasl.jaas.config": JAAS, "sasl.enabled.mechanisms": "PLAIN"}
        )
    )
    # before authentication each refusal fails the session: the server closes the connection
    session = SaslSession(only_plain)
    with pytest.raises(IllegalSaslStateError):
        session.authenticate(b"\0alice\0alice-secret")  # no handshake yet
    assert session.failed
    session = SaslSession(only_plain)
    with pytest.raises(UnsupportedSaslMechanismError):
        session.handshake("SCRAM-SHA-256")
    assert session.failed
    session = SaslSession(only_plain)
    session.handshake("PLAIN")
    with pytest.raises(IllegalSaslStateError):
        session.handshake("PLAIN")
    assert session.failed
    # after it they are only answered, as Kafka's KafkaApis does
    session = SaslSession(only_plain)
    session.handshake("PLAIN")
    session.authenticate(b"\0alice\0alice-secret")
    with pytest.raises(IllegalSaslStateError):
        session.handshake("PLAIN")
    with pytest.raises(IllegalSaslStateError):
        session.authenticate(b"\0alice\0alice-secret")
    assert session.authenticated and not session.failed


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, 'sasl.jaas.config with user_NAME="..."'),
        ({"sasl.jaas.config": JAAS, "sasl.enabled.mechanisms": "GSSAPI"}, "supported are"),
        ({"sasl.jaas.config": JAAS, "sasl.enabled.mechanisms": ""}, "supported are"),
    ],
)
def test_bad_settings(tmp_path: Path, props: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        SaslConfig.from_config(BrokerConfig(tmp_path, overrides=props))


def test_users_per_listener(tmp_path: Path) -> None:
    props = {
        "sasl.jaas.config": 'x required user_admin="admin-secret";',
        "listener.name.external.plain.sasl.jaas.config": 'x required user_app="app-secret";',
        "listener.name.external.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
    }
    external = SaslConfig.from_config(BrokerConfig(tmp_path, overrides=props), "EXTERNAL")
    assert external.mechanisms == ("PLAIN", "SCRAM-SHA-256")
    assert external.passwords == {"admin": "admin-secret", "app": "app-secret"}
    internal = SaslConfig.from_config(BrokerConfig(tmp_path, overrides=props), "INTERNAL")
    assert internal.passwords == {"admin": "admin-secret"}
    assert internal.mechanisms == ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
