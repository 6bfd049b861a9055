"""SASL listeners with real clients: PLAIN and SCRAM-SHA-256/512, in plaintext and over TLS.

Users come from ``sasl.jaas.config`` (Kafka's PlainLoginModule syntax). A wrong password gets
SASL_AUTHENTICATION_FAILED and no data; a connection that skips authentication is closed; the
broker keeps serving the clients that log in.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.broker_process import (
    METADATA,
    SASL_HANDSHAKE,
    BrokerProcess,
    exchange,
    plain_jaas,
    request,
)
from tests.integration.client_helpers import (
    aiokafka_round_trip,
    broker_certificate,
    confluent_round_trip,
    kafka_python_round_trip,
    kcat_round_trip,
)

pytestmark = pytest.mark.integration

USER, PASSWORD = "alice", "alice-secret"
JAAS = plain_jaas({USER: PASSWORD, "bob": "bob-secret"})
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
N = 300


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("sasl") / "data"
    args = ["--config", f"sasl.jaas.config={JAAS}"]
    with BrokerProcess(data, sasl_plain=(USER, PASSWORD), extra_args=args) as broker:
        yield broker


def _conf(
    broker: BrokerProcess, mechanism: str, password: str = PASSWORD, **more: Any
) -> dict[str, Any]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": more.pop("protocol", "SASL_PLAINTEXT"),
        "sasl.mechanism": mechanism,
        "sasl.username": USER,
        "sasl.password": password,
        **more,
    }


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_logs_in(sasl_broker: BrokerProcess, mechanism: str) -> None:
    confluent_round_trip(_conf(sasl_broker, mechanism), f"sasl-{mechanism.lower()}", N)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_wrong_password_is_refused(sasl_broker: BrokerProcess, mechanism: str) -> None:
    errors: list[KafkaError] = []
    topic = f"never-{mechanism.lower()}"
    conf = _conf(sasl_broker, mechanism, "wrong", error_cb=errors.append)
    producer = Producer({**conf, "message.timeout.ms": 3000})
    producer.produce(topic, b"must not arrive")
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert producer.flush(10) == 0  # delivery failed (timed out): nothing is queued
    assert [e.code() for e in errors][:1] == [KafkaError._AUTHENTICATION], errors
    assert "SASL_AUTHENTICATION_FAILED: Authentication failed" in errors[0].str()
    admin = AdminClient(_conf(sasl_broker, mechanism))  # the right password: nothing arrived
    assert topic not in admin.list_topics(timeout=10).topics
    assert sasl_broker.running


def test_requests_before_login_close_the_connection(sasl_broker: BrokerProcess) -> None:
    with pytest.raises((OSError, ValueError)):  # closed: no answer
        request(sasl_broker.port, METADATA, 1, {"topics": []}, timeout=5.0)
    answer = request(sasl_broker.port, METADATA, 1, {"topics": []}, 5.0, None, (USER, PASSWORD))
    assert answer["brokers"]


def _python_client(broker: BrokerProcess, mechanism: str) -> dict[str, Any]:
    """kafka-python's and aiokafka's keywords for a SASL login (they share the names)."""
    return {
        "bootstrap_servers": broker.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": USER,
        "sasl_plain_password": PASSWORD,
    }


def _raw_frame(sock: socket.socket, token: bytes) -> bytes:
    """Send a bare SASL token (after SaslHandshake v0) and read the bare answer."""
    sock.sendall(struct.pack(">i", len(token)) + token)
    (size,) = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))
    return sock.recv(size, socket.MSG_WAITALL) if size else b""


def test_handshake_v0_then_bare_tokens(sasl_broker: BrokerProcess) -> None:
    """Before KIP-152 the tokens follow SaslHandshake v0 as bare frames; a wrong one closes."""
    with socket.create_connection(("127.0.0.1", sasl_broker.port), timeout=5) as sock:
        assert exchange(sock, SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        assert _raw_frame(sock, f"\0{USER}\0{PASSWORD}".encode()) == b""
        assert exchange(sock, METADATA, 1, {"topics": []})["brokers"]
    with socket.create_connection(("127.0.0.1", sasl_broker.port), timeout=5) as sock:
        assert exchange(sock, SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        sock.sendall(struct.pack(">i", 12) + b"\0alice\0wrong")
        assert sock.recv(4) == b""  # closed, no answer


def test_frames_before_login_are_small(sasl_broker: BrokerProcess) -> None:
    """sasl.server.max.receive.size (512 KiB) bounds a frame until the login; after it, the
    usual socket.request.max.bytes does."""
    with socket.create_connection(("127.0.0.1", sasl_broker.port), timeout=5) as sock:
        sock.sendall(struct.pack(">i", 600 * 1024))  # announced, never sent
        assert sock.recv(4) == b""  # refused at once: closed
    topic = "sasl-big"
    producer = Producer(_conf(sasl_broker, "PLAIN", **{"compression.type": "none"}))
    big = b"x" * (700 * 1024)
    producer.produce(topic, big)
    assert producer.flush(20) == 0
    consumer = Consumer(_conf(sasl_broker, "PLAIN", **{"group.id": "big"}))
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        msg = consumer.poll(20)
    finally:
        consumer.close()
    assert msg is not None and msg.error() is None and msg.value() == big


def test_kcat_logs_in(sasl_broker: BrokerProcess) -> None:
    auth = [
        "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-256",
        "-X", f"sasl.username={USER}", "-X", f"sasl.password={PASSWORD}",
    ]  # fmt: skip
    topic = "sasl-kcat"
    lines = [f"kcat-{i}" for i in range(50)]
    kcat_round_trip(sasl_broker.bootstrap, auth, topic, lines)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_kafka_python_logs_in(sasl_broker: BrokerProcess, mechanism: str) -> None:
    common = _python_client(sasl_broker, mechanism)
    values = [f"k{i}".encode() for i in range(N)]
    topic = f"sasl-kafka-python-{mechanism.lower()}"
    assert kafka_python_round_trip(common, topic, values) == values


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_aiokafka_logs_in(sasl_broker: BrokerProcess, mechanism: str) -> None:
    common = _python_client(sasl_broker, mechanism)
    values = [f"a{i}".encode() for i in range(N)]
    assert aiokafka_round_trip(common, f"sasl-aiokafka-{mechanism.lower()}", values) == values


def test_sasl_ssl(tmp_path: Path) -> None:
    cert = broker_certificate(tmp_path)
    keystore, cafile, client_tls = cert.keystore, cert.cafile, cert.client
    args = ["--config", f"sasl.jaas.config={JAAS}", "--config", f"ssl.keystore.location={keystore}"]
    with BrokerProcess(
        tmp_path / "data", tls=client_tls, sasl_plain=(USER, PASSWORD), extra_args=args
    ) as broker:
        conf = _conf(
            broker, "SCRAM-SHA-256", protocol="SASL_SSL", **{"ssl.ca.location": str(cafile)}
        )
        confluent_round_trip(conf, "sasl-ssl", N)
        consumer = Consumer({**conf, "group.id": "g-sasl-ssl"})
        try:  # the round trip's group committed the end of the topic
            committed = consumer.committed([TopicPartition("sasl-ssl", 0)], timeout=10)
        finally:
            consumer.close()
        assert committed[0].offset == N
