"""``groups describe`` names the group's coordinator as kafka-consumer-groups.sh does,
``host:port (id)`` (it showed the broker id alone)."""

from __future__ import annotations

import confluent_kafka
import pytest
from click.testing import CliRunner

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main
from tiered_mq.client.admin import Admin

pytestmark = pytest.mark.integration


def test_describe_shows_the_coordinators_address(broker: BrokerProcess) -> None:
    Admin(bootstrap_servers=broker.bootstrap).create_topic("orders")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g"})
    try:
        committed = confluent_kafka.TopicPartition("orders", 0, 0)
        consumer.commit(offsets=[committed], asynchronous=False)
        [node] = consumer.list_topics(timeout=10).brokers.values()  # the broker's own address
    finally:
        consumer.close()
    done = CliRunner().invoke(main, ["groups", "describe", "g", "-b", broker.bootstrap])
    assert done.exit_code == 0, done.output
    header = done.stdout.splitlines()[0]
    assert f"  Coordinator: {node.host}:{node.port} ({node.id})  " in header, header
