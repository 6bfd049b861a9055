"""``topics describe --exclude-internal`` leaves out internal topics named on the command line
too, as kafka-topics.sh filters its ``--topic`` matches: it described them. When that leaves
no topic the command fails as for a missing one (``--if-exists``: a note, exit 0)."""

from __future__ import annotations

import confluent_kafka
import pytest
from click.testing import CliRunner

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main
from tiered_mq.client.admin import Admin

pytestmark = pytest.mark.integration


def test_describe_exclude_internal_filters_named_topics(broker: BrokerProcess) -> None:
    Admin(bootstrap_servers=broker.bootstrap).create_topic("orders")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g"})
    try:  # a commit makes the broker create __consumer_offsets
        consumer.commit(
            offsets=[confluent_kafka.TopicPartition("orders", 0, 0)], asynchronous=False
        )
    finally:
        consumer.close()

    def describe(*args: str) -> tuple[int, str, str]:
        done = CliRunner().invoke(main, ["topics", "describe", "-b", broker.bootstrap, *args])
        return done.exit_code, done.stdout, done.stderr

    code, out, _ = describe("__consumer_offsets", "orders")
    assert code == 0 and "Topic: __consumer_offsets" in out and "Topic: orders" in out

    code, out, err = describe("__consumer_offsets", "orders", "--exclude-internal")
    assert code == 0, err
    assert "Topic: orders" in out and "__consumer_offsets" not in out

    code, out, err = describe("__consumer_offsets", "--exclude-internal")
    assert code == 1 and out == ""
    assert "Error: UNKNOWN_TOPIC_OR_PARTITION: __consumer_offsets: internal" in err

    code, out, err = describe("--topic", "__consumer_offsets", "--exclude-internal", "--if-exists")
    assert code == 0 and out == "" and "Topic __consumer_offsets does not exist." in err
