"""``listeners``, ``advertised.listeners`` and ``listener.security.protocol.map``: what they
give, and the error each mistake gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.listener import (
    Listener,
    canonical_host_name,
    is_sensitive,
    listeners,
    setting,
)


def config(tmp_path: Path, **props: str) -> BrokerConfig:
    return BrokerConfig(tmp_path, host="0.0.0.0", port=9092, overrides=props)


def test_default_is_plaintext_on_host_and_port(tmp_path: Path) -> None:
    assert listeners(config(tmp_path)) == [
        Listener("PLAINTEXT", "PLAINTEXT", "0.0.0.0", 9092, canonical_host_name(), 9092)
    ]
    named = listeners(config(tmp_path, **{"advertised.host.name": "broker-1"}))
    assert named[0].endpoint == ("broker-1", 9092)


def test_kafkas_default_protocol_map(tmp_path: Path) -> None:
    """The map's default is Kafka's string (SocketServerConfigs, as DescribeConfigs answers it),
    and every security protocol's name resolves through it to that protocol."""
    c = config(tmp_path)
    assert c.get("listener.security.protocol.map") == (
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
    )
    spec = "PLAINTEXT://:9092,SSL://:9093,SASL_PLAINTEXT://:9094,SASL_SSL://:9095"
    assert [(x.name, x.protocol) for x in listeners(config(tmp_path, listeners=spec))] == [
        ("PLAINTEXT", "PLAINTEXT"),
        ("SSL", "SSL"),
        ("SASL_PLAINTEXT", "SASL_PLAINTEXT"),
        ("SASL_SSL", "SASL_SSL"),
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("SSL://127.0.0.1:9093", ("SSL", "SSL", "127.0.0.1", 9093, "127.0.0.1", 9093)),
        ("ssl://:9093", ("SSL", "SSL", "", 9093, canonical_host_name(), 9093)),
        ("PLAINTEXT://[::1]:9094", ("PLAINTEXT", "PLAINTEXT", "::1", 9094, "::1", 9094)),
        ("SASL_SSL://broker:0", ("SASL_SSL", "SASL_SSL", "broker", 0, "broker", 0)),
    ],
)
def test_one_listener(
    tmp_path: Path, spec: str, expected: tuple[str, str, str, int, str, int]
) -> None:
    assert listeners(config(tmp_path, listeners=spec)) == [Listener(*expected)]


def test_internal_and_external_listeners(tmp_path: Path) -> None:
    props = {
        "listeners": "INTERNAL://0.0.0.0:29092,EXTERNAL://0.0.0.0:9092",
        "advertised.listeners": "INTERNAL://broker-1:29092,EXTERNAL://localhost:19092",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
    }
    internal, external = listeners(config(tmp_path, **props))
    assert (internal.name, internal.protocol, internal.endpoint) == (
        "INTERNAL",
        "PLAINTEXT",
        ("broker-1", 29092),
    )
    assert (external.protocol, external.tls, external.sasl) == ("SASL_SSL", True, True)
    assert (external.port, external.endpoint) == (9092, ("localhost", 19092))
    assert external.bound(9999).endpoint == ("localhost", 19092)  # advertised as given
    assert listeners(config(tmp_path, listeners="PLAINTEXT://:0"))[0].bound(4321).endpoint == (
        canonical_host_name(),
        4321,
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"listeners": "SASL_GSSAPI://:9093"}, "no security protocol defined"),
        ({"listeners": "SSL://localhost"}, "NAME://host:port"),
        ({"listeners": "localhost:9092"}, "NAME://host:port"),
        ({"listeners": "PLAINTEXT://:70000"}, "port 70000 out of range 0-65535"),
        (
            {"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://h:65536"},
            "port 65536 out of range",
        ),
        ({"listeners": "SSL://:9093,SSL://:9094"}, "each listener name may appear once"),
        ({"listeners": "SSL://:9093,PLAINTEXT://:9093"}, "two listeners on one port"),
        (
            {"listeners": "PLAINTEXT://:9092", "advertised.listeners": "SSL://host:9093"},
            "advertised.listeners names ['SSL']",
        ),
        ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "meta-address 0.0.0.0"),
        ({"listener.security.protocol.map": "INTERNAL:KERBEROS"}, "NAME:PROTOCOL"),
        # a map set replaces Kafka's default whole: PLAINTEXT is no longer a listener name
        (
            {
                "listeners": "PLAINTEXT://:9092,INTERNAL://:9093",
                "listener.security.protocol.map": "INTERNAL:PLAINTEXT",
            },
            "listener PLAINTEXT: no security protocol defined",
        ),
    ],
)
def test_bad_settings_are_refused(tmp_path: Path, props: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        listeners(config(tmp_path, **props))


def test_settings_per_listener_and_mechanism(tmp_path: Path) -> None:
    props = {
        "sasl.jaas.config": "global",
        "listener.name.external.sasl.jaas.config": "listener",
        "listener.name.external.scram-sha-256.sasl.jaas.config": "mechanism",
    }
    c = config(tmp_path, **props)
    assert setting(c, "EXTERNAL", "sasl.jaas.config", "SCRAM-SHA-256") == (
        "listener.name.external.scram-sha-256.sasl.jaas.config",
        "mechanism",
    )
    assert setting(c, "EXTERNAL", "sasl.jaas.config", "PLAIN")[1] == "listener"
    assert setting(c, "INTERNAL", "sasl.jaas.config", "PLAIN") == ("sasl.jaas.config", "global")
    assert setting(c, "INTERNAL", "ssl.truststore.location") == ("ssl.truststore.location", "")
    assert is_sensitive("listener.name.external.plain.sasl.jaas.config")
    assert is_sensitive("ssl.key.password") and not is_sensitive("ssl.keystore.location")
    # every password setting of Kafka's, used here or not, in each of its forms
    for key in ("ssl.truststore.password", "ssl.keystore.password", "ssl.keystore.key"):
        assert is_sensitive(key) and is_sensitive(f"listener.name.external.{key}")
    assert not is_sensitive("ssl.truststore.location")
    # Kafka hides a value whose type it does not know: an unknown ssl.*/sasl.* key
    assert is_sensitive("ssl.keystore.pasword")
    assert is_sensitive("listener.name.external.scram-sha-256.sasl.login.token")
    for known in ("ssl.principal.mapping.rules", "sasl.kerberos.service.name"):
        assert not is_sensitive(known) and not is_sensitive(f"listener.name.external.{known}")
    assert not is_sensitive("listener.name.external.plain.sasl.login.class")
    assert not is_sensitive("socket.request.max.bytes")
