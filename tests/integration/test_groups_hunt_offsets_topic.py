"""Committed offsets survive a restart with another ``offsets.topic.num.partitions``: once
``__consumer_offsets`` exists its own partition count places the groups, as in Kafka (the
setting only sizes the topic when it is created)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_groups_confluent import create_topic

pytestmark = pytest.mark.integration

GROUPS = [f"app-{i}" for i in range(6)]


def committed(bootstrap: str, group: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (tp,) = consumer.committed([TopicPartition("orders", 0)], 15)
        return int(tp.offset)
    finally:
        consumer.close()


def test_offsets_survive_a_changed_offsets_topic_partition_count(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data) as broker:
        create_topic(broker.bootstrap, "orders", 1)
        for i, group in enumerate(GROUPS):
            consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
            consumer.commit(offsets=[TopicPartition("orders", 0, 100 + i)], asynchronous=False)
            consumer.close()
    resized = ["--config", "offsets.topic.num.partitions=5"]
    with BrokerProcess(data, extra_args=resized) as broker:
        assert [committed(broker.bootstrap, g) for g in GROUPS] == [100 + i for i in range(6)]
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUPS[0]})
        consumer.commit(offsets=[TopicPartition("orders", 0, 7)], asynchronous=False)
        consumer.close()
    with BrokerProcess(data) as broker:
        assert committed(broker.bootstrap, GROUPS[0]) == 7
