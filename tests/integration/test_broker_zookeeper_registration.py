"""The broker registration ``/brokers/ids/<id>`` of a broker with several listeners, as Kafka
writes it (BrokerIdZNode version 5), so that tools reading ZooKeeper find every listener with its
security protocol; clients on both listeners still work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
        confluent_round_trip({"bootstrap.servers": f"127.0.0.1:{internal}"}, "inside", 50)
