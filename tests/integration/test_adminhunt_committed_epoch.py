"""OffsetFetch answers the leader epoch each committed offset was committed with, as Kafka's
group coordinator does (``OffsetMetadataManager.fetchOffsets``: ``committedLeaderEpoch`` is the
stored one, -1 only when the commit named none). The broker stored it but answered -1, so
confluent-kafka's ``list_consumer_group_offsets``/``committed()`` showed no epoch for a commit
made with one, and Java's ``listConsumerGroupOffsets`` an empty ``leaderEpoch()``."""

from __future__ import annotations

import signal
import time

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)
from tests.integration.test_groups_confluent import create_topic, group_consumer, produce

pytestmark = pytest.mark.integration


def listed_epochs(bootstrap: str, group: str) -> dict[int, tuple[int, int | None]]:
    """confluent-kafka AdminClient: partition -> (committed offset, committed leader epoch)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {tp.partition: (tp.offset, tp.leader_epoch) for tp in future.result(15).topic_partitions}


def current_epoch(bootstrap: str, topic: str) -> int:
    """The partition's leader epoch as ListOffsets LATEST reports it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    info = admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(15)
    assert info.leader_epoch is not None
    return int(info.leader_epoch)


def consume(consumer: Consumer, count: int, timeout: float = 30) -> None:
    got = 0
    deadline = time.monotonic() + timeout
    while got < count:
        assert time.monotonic() < deadline, f"consumed {got} of {count}"
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got += 1


def test_a_consumers_commit_lists_its_leader_epoch(shared_broker: BrokerProcess) -> None:
    bootstrap = shared_broker.bootstrap
    topic, group = "adminhunt-epoch", "adminhunt-epoch-group"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 5, 1)
    epoch = current_epoch(bootstrap, topic)
    consumer = group_consumer(bootstrap, group)
    try:
        consumer.subscribe([topic])
        consume(consumer, 5)
        consumer.commit(asynchronous=False)  # librdkafka commits the records' leader epoch
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=15)
    finally:
        consumer.close()
    assert (committed[0].offset, committed[0].leader_epoch) == (5, epoch)
    assert listed_epochs(bootstrap, group) == {0: (5, epoch)}


def test_an_explicit_epoch_is_kept_and_none_stays_none(shared_broker: BrokerProcess) -> None:
    bootstrap = shared_broker.bootstrap
    topic, group = "adminhunt-epoch-explicit", "adminhunt-epoch-explicit-group"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, 10, 2)
    consumer = group_consumer(bootstrap, group)
    try:
        offsets = [TopicPartition(topic, 0, 3, leader_epoch=0), TopicPartition(topic, 1, 4)]
        assert consumer.commit(offsets=offsets, asynchronous=False) is not None
    finally:
        consumer.close()
    assert listed_epochs(bootstrap, group) == {0: (3, 0), 1: (4, None)}


def test_the_epoch_survives_a_broker_sigkill(broker: BrokerProcess) -> None:
    """The epoch is on __consumer_offsets with its offset: a SIGKILL and a reload keep it."""
    topic, group = "adminhunt-epoch-kill", "adminhunt-epoch-kill-group"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, 4, 1)
    consumer = group_consumer(broker.bootstrap, group)
    try:
        offsets = [TopicPartition(topic, 0, 4, leader_epoch=0)]
        assert consumer.commit(offsets=offsets, asynchronous=False) is not None
    finally:
        consumer.close()
    broker.restart(signal.SIGKILL)
    assert listed_epochs(broker.bootstrap, group) == {0: (4, 0)}


def test_java_lists_the_epoch_it_committed(java: Java, shared_broker: BrokerProcess) -> None:  # noqa: F811
    """Java's Admin: alterConsumerGroupOffsets with a leader epoch (``OFFSET@EPOCH``), then
    listConsumerGroupOffsets (``group-offsets-epochs`` prints each offset with its epoch)."""
    bootstrap = shared_broker.bootstrap
    topic, group = "adminhunt-epoch-java", "adminhunt-epoch-java-group"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 3, 1)
    altered, listed = java.admin(
        shared_broker, f"alter-group-offsets {group} {topic}:0=2@0", f"group-offsets-epochs {group}"
    )
    assert altered["ok"] is True, altered
    assert listed["ok"] == {f"{topic}:0": {"offset": 2, "leader_epoch": 0}}, listed
