"""The broker registration ``/brokers/ids/<id>`` of a broker with several listeners, as Kafka
writes it (BrokerIdZNode version 5), so that tools reading ZooKeeper find every listener with its
security protocol; clients on both listeners still work. ``broker.rack`` is registered as
``rack`` and answered by Metadata and DescribeCluster, in ZooKeeper mode and in dev mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.client_helpers import confluent_round_trip
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes

pytestmark = pytest.mark.integration


def test_every_listener_is_registered_with_its_protocol(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    external, internal = free_port(), free_port()
    args = [
        "--config", f"zookeeper.connect={connect}",
        "--config", f"listeners=EXTERNAL://127.0.0.1:{external},INTERNAL://127.0.0.1:{internal}",
        "--config", f"advertised.listeners=EXTERNAL://localhost:{external}",
        "--config", "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
        "--config", 'sasl.jaas.config=x required user_app="app-secret";',
    ]  # fmt: skip
    with BrokerProcess(tmp_path / "data", port=internal, extra_args=args):
        zk = kazoo_client(connect)
        try:
            registration = json.loads(zk.get(znodes.broker(0))[0])
        finally:
            zk.stop()
        assert registration["endpoints"] == [
            f"EXTERNAL://localhost:{external}",
            f"INTERNAL://127.0.0.1:{internal}",
        ]
        assert registration["listener_security_protocol_map"] == {
            "EXTERNAL": "SASL_PLAINTEXT",
            "INTERNAL": "PLAINTEXT",
        }
        # Kafka's host and port: the first PLAINTEXT listener's, for PLAINTEXT-only clients
        assert (registration["host"], registration["port"]) == ("127.0.0.1", internal)
        assert registration["version"] == 5
        assert "rack" not in registration  # Kafka writes it only when broker.rack is set
        confluent_round_trip({"bootstrap.servers": f"127.0.0.1:{internal}"}, "inside", 50)


@pytest.mark.parametrize("mode", ["zookeeper", "dev"])
def test_broker_rack_is_registered_and_answered(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
    mode: str,
) -> None:
    """Kafka's BrokerIdZNode carries ``"rack"`` when broker.rack is set, and clients see it in
    Metadata (librdkafka's describe_cluster) and DescribeCluster (kafka-python's). It was
    accepted and ignored: registered without it, answered null."""
    args = ["--config", "broker.rack=rack-b"]
    if mode == "zookeeper":
        connect = zookeeper.connect_string(zookeeper.new_chroot())
        args += ["--config", f"zookeeper.connect={connect}"]
    with BrokerProcess(tmp_path / "data", port=free_port(), extra_args=args) as broker:
        if mode == "zookeeper":
            zk = kazoo_client(connect)
            try:
                registration = json.loads(zk.get(znodes.broker(0))[0])
            finally:
                zk.stop()
            assert registration["rack"] == "rack-b"
        librdkafka = AdminClient({"bootstrap.servers": broker.bootstrap})
        nodes = librdkafka.describe_cluster().result(timeout=15).nodes
        assert [(n.id, n.rack) for n in nodes] == [(0, "rack-b")]
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            described = admin.describe_cluster()
        finally:
            admin.close()
        assert [(b["broker_id"], b["rack"]) for b in described["brokers"]] == [(0, "rack-b")]
