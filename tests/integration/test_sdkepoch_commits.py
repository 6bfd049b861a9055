"""The SDK consumer's commits carry the leader epoch of the last record consumed per partition,
as Java's consumer commits its position (KIP-320: offset and the epoch of the record before it),
and so do ``tiered-mq consume -g``'s, which go through the SDK. The SDK built its commits from
offsets alone: confluent-kafka's ``list_consumer_group_offsets`` and ``committed`` showed
``leader_epoch=None`` where a plain confluent-kafka ``commit(message=m)`` shows the epoch.

Here the broker is a dev broker (every partition at the epoch it was created with); the epoch
compared is the one ListOffsets reports. test_sdkepoch_zookeeper.py moves the epoch mid-way."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from confluent_kafka import Consumer as CkConsumer
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from tests.integration.broker_process import BrokerProcess
from tiered_mq.client import (
    Admin,
    ConsumedRecord,
    Consumer,
    ConsumerConfig,
    DeliverySemantics,
    Producer,
)
from tiered_mq.client.consumer import _next_offsets

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-c", "import sys; from tiered_mq.cli import main; sys.exit(main())"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def listed(bootstrap: str, group: str) -> dict[tuple[str, int], tuple[int, int | None]]:
    """confluent-kafka AdminClient: (topic, partition) -> (committed offset, leader epoch)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {
        (tp.topic, tp.partition): (tp.offset, tp.leader_epoch)
        for tp in future.result(15).topic_partitions
    }


def committed(bootstrap: str, group: str, tp: TopicPartition) -> tuple[int, int | None]:
    """confluent-kafka ``Consumer.committed`` of the group: (offset, leader epoch)."""
    consumer = CkConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        [answer] = consumer.committed([tp], timeout=15)
    finally:
        consumer.close()
    return answer.offset, answer.leader_epoch


def current_epoch(bootstrap: str, topic: str, partition: int) -> int:
    """The partition's leader epoch as ListOffsets LATEST reports it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition)
    epoch = admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(15).leader_epoch
    assert epoch is not None
    return int(epoch)


def new_topic(bootstrap: str, partitions: int, per_partition: int) -> str:
    """A topic with ``per_partition`` records in each partition."""
    topic = f"sdkepoch-{uuid.uuid4().hex[:8]}"
    Admin(bootstrap_servers=bootstrap).create_topic(topic, partitions=partitions)
    with Producer(bootstrap_servers=bootstrap) as producer:
        for p in range(partitions):
            for i in range(per_partition):
                producer.send(topic, f"v{p}-{i}".encode(), partition=p)
    return topic


def sdk_consumer(bootstrap: str, group: str, semantics: DeliverySemantics) -> Consumer:
    return Consumer(
        ConsumerConfig(
            bootstrap_servers=bootstrap,
            group_id=group,
            semantics=semantics,
            auto_offset_reset="earliest",
        )
    )


def take(consumer: Consumer, n: int) -> list[ConsumedRecord]:
    records: list[ConsumedRecord] = []
    for _ in range(60):
        records += consumer.consume(n - len(records), timeout=0.5)
        if len(records) >= n:
            break
    assert len(records) == n, records
    return records


@pytest.fixture(scope="module")
def bootstrap(shared_broker: BrokerProcess) -> str:
    return shared_broker.bootstrap


def test_at_least_once_commits_carry_the_records_epoch(bootstrap: str) -> None:
    topic, group = new_topic(bootstrap, 2, 4), f"g-{uuid.uuid4().hex[:8]}"
    epochs = {p: current_epoch(bootstrap, topic, p) for p in (0, 1)}
    with sdk_consumer(bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as consumer:
        consumer.subscribe([topic])
        records = take(consumer, 8)
        assert {(r.partition, r.leader_epoch) for r in records} == set(epochs.items())
        consumer.ack(*records)
        consumer.commit()
    assert listed(bootstrap, group) == {(topic, p): (4, e) for p, e in epochs.items()}
    assert committed(bootstrap, group, TopicPartition(topic, 0)) == (4, epochs[0])


def test_an_ack_commits_on_close_with_the_epoch(bootstrap: str) -> None:
    """``process`` acknowledges record by record; ``close`` commits what is stored."""
    topic, group = new_topic(bootstrap, 1, 3), f"g-{uuid.uuid4().hex[:8]}"
    with sdk_consumer(bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as consumer:
        consumer.subscribe([topic])
        assert consumer.process(lambda r: None, max_records=3, idle_timeout=30) == 3
    assert listed(bootstrap, group) == {(topic, 0): (3, current_epoch(bootstrap, topic, 0))}


def test_at_most_once_commits_carry_the_records_epoch(bootstrap: str) -> None:
    topic, group = new_topic(bootstrap, 1, 5), f"g-{uuid.uuid4().hex[:8]}"
    with sdk_consumer(bootstrap, group, DeliverySemantics.AT_MOST_ONCE) as consumer:
        consumer.subscribe([topic])
        take(consumer, 5)  # committed before they are handed out
    assert listed(bootstrap, group) == {(topic, 0): (5, current_epoch(bootstrap, topic, 0))}


def test_cli_consume_commits_carry_the_records_epoch(bootstrap: str) -> None:
    topic, group = new_topic(bootstrap, 1, 6), f"g-{uuid.uuid4().hex[:8]}"
    args = ["consume", topic, "-g", group, "--from-beginning", "--max-messages", "6"]
    done = subprocess.run(
        [*CLI, *args, "-b", bootstrap], capture_output=True, env=ENV, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"v0-{i}".encode() for i in range(6)]
    assert listed(bootstrap, group) == {(topic, 0): (6, current_epoch(bootstrap, topic, 0))}


def test_the_epoch_is_the_one_of_the_highest_offset_per_partition() -> None:
    """Records acknowledged out of order: each partition's commit is its highest offset + 1
    with that record's epoch; a record without an epoch commits none (confluent-kafka then
    sends -1, as Java's ``OffsetAndMetadata`` without one)."""

    def rec(partition: int, offset: int, epoch: int | None) -> ConsumedRecord:
        return ConsumedRecord("t", partition, offset, 0, None, b"", leader_epoch=epoch)

    offsets = _next_offsets([rec(0, 7, 3), rec(0, 5, 2), rec(1, 2, None), rec(0, 6, 2)])
    got = {tp.partition: (tp.offset, tp.leader_epoch) for tp in offsets}
    assert got == {0: (8, 3), 1: (3, None)}
