"""An SSL listener (``listeners=SSL://...``, PEM keystore) with every client family over TLS.

The values are big enough that Fetch answers carry segment regions well past the inline size
and past one read chunk, so a region sent with sendfile (plaintext under the TLS record layer)
would break every consumer here. A plaintext client on the TLS port only loses its own
connection, and ``ssl.client.auth=required`` admits only clients with a certificate from the
truststore's CA.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme
from click.testing import CliRunner, Result
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import METADATA, BrokerProcess, request
from tests.integration.client_helpers import (
    aiokafka_round_trip,
    kafka_python_round_trip,
    kcat_round_trip,
    take,
)
from tiered_mq.cli import main

pytestmark = pytest.mark.integration

N = 400
VALUE_BYTES = 8 * 1024  # 400 x 8 KiB: fetches of several MiB, regions >> 16 KiB


@dataclass
class Pki:
    ca: trustme.CA
    cafile: Path
    keystore: Path
    dir: Path

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        return ctx

    def client_cert(self, name: str) -> tuple[Path, Path]:
        """(certificate chain, key) PEM files of a client certificate from the CA."""
        cert = self.ca.issue_cert(f"{name}.clients.test")
        chain, key = self.dir / f"{name}-chain.pem", self.dir / f"{name}-key.pem"
        chain.write_bytes(b"".join(c.bytes() for c in cert.cert_chain_pems))
        cert.private_key_pem.write_to_path(str(key))
        return chain, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    keystore, cafile = d / "broker.pem", d / "ca.pem"
    server.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    ca.cert_pem.write_to_path(str(cafile))
    return Pki(ca, cafile, keystore, d)


def _ssl_args(pki: Pki, **more: str) -> list[str]:
    args = ["--config", f"ssl.keystore.location={pki.keystore}"]
    for key, value in more.items():
        args += ["--config", f"{key.replace('_', '.')}={value}"]
    return args


@pytest.fixture(scope="module")
def tls_broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("tls") / "data"
    with BrokerProcess(data, tls=pki.client_context(), extra_args=_ssl_args(pki)) as broker:
        yield broker


def _conf(broker: BrokerProcess, pki: Pki, **more: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SSL",
        "ssl.ca.location": str(pki.cafile),
        **more,
    }


def _values(tag: str) -> list[bytes]:
    return [f"{tag}-{i:06d}-".encode() + os.urandom(VALUE_BYTES) for i in range(N)]


def _new_topic(broker: BrokerProcess, pki: Pki, name: str) -> str:
    admin = AdminClient(_conf(broker, pki))
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(20)
    return name


def _confluent_produce(broker: BrokerProcess, pki: Pki, topic: str, values: list[bytes]) -> None:
    producer = Producer(_conf(broker, pki, **{"linger.ms": 5, "compression.type": "lz4"}))
    for v in values:
        producer.produce(topic, v)
    assert producer.flush(30) == 0


def _confluent_consume(
    broker: BrokerProcess, pki: Pki, topic: str, n: int, **more: Any
) -> list[bytes]:
    consumer = Consumer(
        _conf(broker, pki, **{"group.id": "tls", "enable.auto.commit": False, **more})
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        return [m.value() or b"" for m in take(consumer, n)]
    finally:
        consumer.close()


def test_confluent_kafka_over_tls(tls_broker: BrokerProcess, pki: Pki) -> None:
    topic = _new_topic(tls_broker, pki, "tls-confluent")
    values = _values("c")
    _confluent_produce(tls_broker, pki, topic, values)
    assert _confluent_consume(tls_broker, pki, topic, N) == values
    # the answer names the listener's own port, so clients stay on TLS
    answer = request(tls_broker.port, METADATA, 1, {"topics": []}, 5.0, pki.client_context())
    assert [(b["host"], b["port"]) for b in answer["brokers"]] == [("127.0.0.1", tls_broker.port)]


def test_kcat_over_tls(tls_broker: BrokerProcess, pki: Pki) -> None:
    topic = _new_topic(tls_broker, pki, "tls-kcat")
    lines = [f"line-{i}-" + "x" * 2000 for i in range(N)]
    ssl_opts = ["-X", "security.protocol=SSL", "-X", f"ssl.ca.location={pki.cafile}"]
    kcat_round_trip(tls_broker.bootstrap, ssl_opts, topic, lines, ["-z", "gzip"])


def test_kafka_python_over_tls(tls_broker: BrokerProcess, pki: Pki) -> None:
    topic = _new_topic(tls_broker, pki, "tls-kafka-python")
    values = _values("k")
    common = {
        "bootstrap_servers": tls_broker.bootstrap,
        "security_protocol": "SSL",
        "ssl_cafile": str(pki.cafile),
    }
    assert kafka_python_round_trip(common, topic, values) == values
    assert _confluent_consume(tls_broker, pki, topic, N) == values


def test_aiokafka_over_tls(tls_broker: BrokerProcess, pki: Pki) -> None:
    topic = _new_topic(tls_broker, pki, "tls-aiokafka")
    values = _values("a")
    common = {
        "bootstrap_servers": tls_broker.bootstrap,
        "security_protocol": "SSL",
        "ssl_context": pki.client_context(),
    }
    assert aiokafka_round_trip(common, topic, values) == values


def configs_cli(broker: BrokerProcess, *properties: str) -> Result:
    """``tiered-mq configs describe --broker 0`` with ``-X`` ``properties``: the CLI's own
    connection (client/connection.py), not librdkafka's."""
    argv = ["configs", "describe", "--broker", "0", "-b", broker.bootstrap, "--timeout", "10"]
    return CliRunner().invoke(main, argv + [x for p in properties for x in ("-X", p)])


def test_cli_configs_over_tls(tls_broker: BrokerProcess, pki: Pki) -> None:
    described = configs_cli(tls_broker, "security.protocol=SSL", f"ssl.ca.location={pki.cafile}")
    assert described.exit_code == 0, described.output
    assert described.stdout.splitlines()[0] == "Broker: 0"
    untrusted = configs_cli(tls_broker, "security.protocol=SSL")  # the system's CAs only
    assert untrusted.exit_code == 1
    [error] = untrusted.stderr.splitlines()
    assert error.startswith(f"Error: _SSL: TLS with {tls_broker.bootstrap} failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in error


def test_plaintext_client_on_the_tls_port_loses_only_its_connection(
    tls_broker: BrokerProcess, pki: Pki
) -> None:
    with pytest.raises((OSError, ValueError)):
        request(tls_broker.port, METADATA, 1, {"topics": []}, timeout=5.0)  # no TLS
    assert tls_broker.running
    answer = request(tls_broker.port, METADATA, 1, {"topics": []}, 5.0, pki.client_context())
    assert answer["brokers"]


def test_client_auth_required(pki: Pki, tmp_path: Path) -> None:
    auth = _ssl_args(pki, ssl_client_auth="required", ssl_truststore_location=str(pki.cafile))
    chain, key = pki.client_cert("app")
    ctx = pki.client_context()
    ctx.load_cert_chain(str(chain), str(key))  # readiness is checked with a certificate
    with BrokerProcess(tmp_path / "data", tls=ctx, extra_args=auth) as broker:
        topic = "tls-mutual"
        with_cert = {"ssl.certificate.location": str(chain), "ssl.key.location": str(key)}
        admin = AdminClient(_conf(broker, pki, **with_cert))
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)
        producer = Producer(_conf(broker, pki, **with_cert))
        producer.produce(topic, b"from a known client")
        assert producer.flush(20) == 0

        anonymous = AdminClient(_conf(broker, pki))
        with pytest.raises(KafkaException):  # the handshake fails: no metadata, ever
            anonymous.list_topics(timeout=5)
        assert _confluent_consume(broker, pki, topic, 1, **with_cert) == [b"from a known client"]
        tls = ["security.protocol=SSL", f"ssl.ca.location={pki.cafile}"]
        mine = [f"ssl.certificate.location={chain}", f"ssl.key.location={key}"]
        assert configs_cli(broker, *tls, *mine).exit_code == 0
        refused = configs_cli(broker, *tls)
        assert refused.exit_code == 1 and refused.stderr.startswith("Error: _"), refused.stderr


def test_bad_ssl_setting_stops_the_start_with_its_name(tmp_path: Path) -> None:
    broker = BrokerProcess(
        tmp_path / "data",
        tls=ssl.create_default_context(),
        extra_args=["--config", "ssl.keystore.location=/nonexistent/broker.pem"],
        startup_timeout=15,
    )
    with pytest.raises(RuntimeError) as info:
        broker.start()
    assert "ssl.keystore.location=/nonexistent/broker.pem" in str(info.value)
