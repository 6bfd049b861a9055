"""``topics list`` shows the internal topics as kafka-topics.sh --list does, and
``--exclude-internal`` leaves them out (it hid them, and took ``--internal`` to show them).
Internal means Kafka's internal topics only: a user topic whose name starts with ``__`` is
listed either way (the CLI hid every ``__`` name)."""

from __future__ import annotations

import confluent_kafka
import pytest
from click.testing import CliRunner

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main
from tiered_mq.client.admin import Admin

pytestmark = pytest.mark.integration


def test_list_shows_internal_topics_unless_excluded(broker: BrokerProcess) -> None:
    admin = Admin(bootstrap_servers=broker.bootstrap)
    admin.create_topic("orders")
    admin.create_topic("__user-topic")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g"})
    try:  # a commit makes the broker create __consumer_offsets
        consumer.commit(
            offsets=[confluent_kafka.TopicPartition("orders", 0, 0)], asynchronous=False
        )
    finally:
        consumer.close()

    def listed(*args: str) -> list[str]:
        done = CliRunner().invoke(main, ["topics", "list", "-b", broker.bootstrap, *args])
        assert done.exit_code == 0, done.output
        return done.stdout.splitlines()

    assert listed() == ["__consumer_offsets", "__user-topic", "orders"]
    assert listed("--exclude-internal") == ["__user-topic", "orders"]
