"""OffsetDelete (47) with real clients: offsets committed by confluent-kafka, deleted with
kafka-python's ``KafkaAdminClient.delete_group_offsets``, and checked as a user would: what
confluent-kafka's ``list_consumer_group_offsets`` shows, where a new consumer of the group
starts, and that both hold after the broker restarts (SIGTERM, or SIGKILL right after the
answer). An active group keeps the offsets of the topics it subscribes to."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import GroupIdNotFoundError, GroupSubscribedToTopicError, NoError

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_groups_confluent import create_topic, group_consumer, produce

pytestmark = pytest.mark.integration


def commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``offsets`` for ``group`` from a consumer that never joins it, then close it."""
    consumer = group_consumer(bootstrap, group)
    try:
        tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        committed = consumer.commit(offsets=tps, asynchronous=False)
        assert committed is not None and all(tp.error is None for tp in committed)
    finally:
        consumer.close()


def listed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {(tp.topic, tp.partition): tp.offset for tp in future.result(15).topic_partitions}


def delete_offsets(
    bootstrap: str, group: str, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], Any]:
    """kafka-python's answer: each partition's error class (NoError on success)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        result = admin.delete_group_offsets(
            group, [KafkaTopicPartition(t, p) for t, p in partitions]
        )
    finally:
        admin.close()
    return {(tp.topic, tp.partition): error for tp, error in result.items()}


def first_offsets(consumer: Consumer, partitions: int, timeout: float = 30) -> dict[int, int]:
    """The offset of the first message the consumer gets from each partition."""
    first: dict[int, int] = {}
    deadline = time.monotonic() + timeout
    while len(first) < partitions:
        assert time.monotonic() < deadline, f"only {first} in {timeout} s"
        message = consumer.poll(0.2)
        if message is None or message.error() is not None:
            continue
        partition, offset = message.partition(), message.offset()
        assert partition is not None and offset is not None
        first.setdefault(partition, offset)
    return first


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_deleted_offsets_are_gone_after_a_restart(broker: BrokerProcess, sig: int) -> None:
    topic, group = "od", "od-group"
    create_topic(broker.bootstrap, topic, 3)
    produce(broker.bootstrap, topic, 30, 3)  # 10 messages per partition
    commit(broker.bootstrap, group, {(topic, 0): 4, (topic, 1): 5, (topic, 2): 6})
    assert listed(broker.bootstrap, group) == {(topic, 0): 4, (topic, 1): 5, (topic, 2): 6}

    answer = delete_offsets(broker.bootstrap, group, [(topic, 0), (topic, 1)])
    assert answer == {(topic, 0): NoError, (topic, 1): NoError}
    assert listed(broker.bootstrap, group) == {(topic, 2): 6}

    broker.restart(sig)
    assert listed(broker.bootstrap, group) == {(topic, 2): 6}
    # A new member of the group: auto.offset.reset (earliest) where the offsets were deleted.
    consumer = group_consumer(broker.bootstrap, group)
    try:
        consumer.subscribe([topic])
        assert first_offsets(consumer, 3) == {0: 0, 1: 0, 2: 6}
    finally:
        consumer.close()


def test_active_group_keeps_the_offsets_of_its_topics(broker: BrokerProcess) -> None:
    group = "od-active"
    create_topic(broker.bootstrap, "od-sub", 2)
    create_topic(broker.bootstrap, "od-free", 1)
    produce(broker.bootstrap, "od-sub", 4, 2)
    consumer = group_consumer(broker.bootstrap, group)
    try:
        consumer.subscribe(["od-sub"])
        first_offsets(consumer, 2)  # joined, assigned both partitions, consuming
        offsets = [TopicPartition("od-sub", 0, 2), TopicPartition("od-free", 0, 7)]
        committed = consumer.commit(offsets=offsets, asynchronous=False)
        assert committed is not None and all(tp.error is None for tp in committed)

        answer = delete_offsets(broker.bootstrap, group, [("od-sub", 0), ("od-free", 0)])
        assert answer == {("od-sub", 0): GroupSubscribedToTopicError, ("od-free", 0): NoError}
        assert listed(broker.bootstrap, group) == {("od-sub", 0): 2}
    finally:
        consumer.close()
    # Once the group is empty, the subscribed topic's offsets can go too.
    answer = delete_offsets(broker.bootstrap, group, [("od-sub", 0)])
    assert answer == {("od-sub", 0): NoError}
    assert listed(broker.bootstrap, group) == {}


def test_unknown_group(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "od-x", 1)
    with pytest.raises(GroupIdNotFoundError):
        delete_offsets(broker.bootstrap, "od-never", [("od-x", 0)])


def test_deleting_a_topic_removes_its_offsets_from_every_group(broker: BrokerProcess) -> None:
    """As Kafka: a topic deleted and created again under the same name starts with no
    committed offsets, so a group reads the new topic from its reset point instead of
    skipping to the old offsets; other topics' offsets stay (and all of it after a restart)."""
    create_topic(broker.bootstrap, "gone", 2)
    create_topic(broker.bootstrap, "kept", 1)
    produce(broker.bootstrap, "gone", 20, 2)
    commit(broker.bootstrap, "g1", {("gone", 0): 7, ("gone", 1): 8, ("kept", 0): 3})
    commit(broker.bootstrap, "g2", {("gone", 0): 5})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_topics(["gone"])["gone"].result(15)
    assert listed(broker.bootstrap, "g1") == {("kept", 0): 3}
    assert listed(broker.bootstrap, "g2") == {}
    create_topic(broker.bootstrap, "gone", 2)
    produce(broker.bootstrap, "gone", 4, 2)
    broker.restart()
    assert listed(broker.bootstrap, "g1") == {("kept", 0): 3}
    consumer = group_consumer(broker.bootstrap, "g1")
    try:
        consumer.subscribe(["gone"])
        assert first_offsets(consumer, 2) == {0: 0, 1: 0}
    finally:
        consumer.close()
