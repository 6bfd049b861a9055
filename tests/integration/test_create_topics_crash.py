"""SIGKILL during a CreateTopics of many partitions, with confluent-kafka against a real broker
process: the restart is clean and the topic fully usable.

The partitions of one CreateTopics open together and their small files are fsynced together at
the end (replica_manager.py ``_open_locals``): a crash in the middle leaves some partition
directories, some without ``partition.metadata`` or without their segment files. A SIGKILL
keeps what was written (the page cache survives); a power loss may also lose what was not
fsynced yet, which the test makes on disk after the kill: a third of the directories lose
their ``partition.metadata``, a third every file. The broker must start, open every partition
(the topic is in the metadata: it was registered before the directories were made), serve
produce and fetch on each, and keep every record it acknowledged across another SIGKILL."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess
from tiered_mq.hot import partition_metadata

pytestmark = pytest.mark.integration

TOPIC = "wide"
PARTITIONS = 2000


def partition_dirs(data_dir: Path) -> list[Path]:
    return sorted(
        Path(e.path) for e in os.scandir(data_dir) if e.name.startswith(f"{TOPIC}-") and e.is_dir()
    )


def produce(bootstrap: str, records: list[tuple[str, int, bytes]]) -> None:
    """Produce ``(topic, partition, value)`` records; every one must be acknowledged."""
    failed: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            failed.append(err)

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
    for topic, partition, value in records:
        producer.produce(topic, value, partition=partition, on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert not failed, failed[:5]


def consume(bootstrap: str, topic: str, partitions: int, expected: int) -> list[bytes]:
    """Every record of ``topic``'s partitions from offset 0 (until ``expected`` or 30 s)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "check", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < expected and time.monotonic() < deadline:
            for m in consumer.consume(1000, timeout=1):
                assert m.error() is None, m.error()
                got.append(m.value())
    finally:
        consumer.close()
    return got


def test_sigkill_during_a_large_create_topics_restarts_clean(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("before", 1, 1)])["before"].result(20)
        kept = [f"kept-{i}".encode() for i in range(10)]
        produce(broker.bootstrap, [("before", 0, v) for v in kept])

        futures = admin.create_topics(
            [NewTopic(TOPIC, PARTITIONS, 1)], operation_timeout=60, request_timeout=60
        )
        deadline = time.monotonic() + 30
        while len(partition_dirs(data)) < 50:  # the creation is under way
            assert time.monotonic() < deadline, "no partition directory appeared"
            time.sleep(0.002)
        answered = futures[TOPIC].done()
        broker.kill()
        assert not answered, "the CreateTopics was answered before the kill: nothing tested"

        made = partition_dirs(data)
        assert len(made) >= 50
        for dir in made[::3]:  # a power loss before the grouped fsyncs: no partition.metadata
            partition_metadata.path_in(dir).unlink(missing_ok=True)
        for dir in made[1::3]:  # ... or nothing at all in the directory
            for file in dir.iterdir():
                file.unlink()

        broker.start()  # a clean start, within the start timeout
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic = admin.list_topics(TOPIC, timeout=20).topics[TOPIC]
        assert topic.error is None
        assert len(topic.partitions) == PARTITIONS
        assert all(p.error is None and p.leader == 0 for p in topic.partitions.values())

        values = [f"v-{i}".encode() for i in range(PARTITIONS)]
        produce(broker.bootstrap, [(TOPIC, i, v) for i, v in enumerate(values)])
        broker.kill()
        broker.start()

        assert sorted(consume(broker.bootstrap, TOPIC, PARTITIONS, PARTITIONS)) == sorted(values)
        assert consume(broker.bootstrap, "before", 1, len(kept)) == kept
        all_dirs = partition_dirs(data)
        assert len(all_dirs) == PARTITIONS
        ids = {partition_metadata.read(dir) for dir in all_dirs}
        assert len(ids) == 1 and None not in ids  # every directory records the topic's id


def test_sigkill_during_a_create_topics_of_many_topics_leaves_each_whole(tmp_path: Path) -> None:
    """The topics of one CreateTopics are registered in one coordinator write, before any of
    their directories is made: a kill while the directories are being made leaves every topic
    of the request registered, each with all its partitions (created at the next start), none
    half made."""
    topics, partitions = 100, 20
    names = [f"many-{i:03}" for i in range(topics)]
    data = tmp_path / "data"
    with BrokerProcess(data) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        futures = admin.create_topics(
            [NewTopic(n, partitions, 1) for n in names], operation_timeout=60, request_timeout=60
        )

        def made() -> list[Path]:
            return [Path(e.path) for e in os.scandir(data) if e.name.startswith("many-")]

        deadline = time.monotonic() + 30
        while len(made()) < 50:  # the creation is under way
            assert time.monotonic() < deadline, "no partition directory appeared"
            time.sleep(0.002)
        answered = any(f.done() for f in futures.values())
        broker.kill()
        assert not answered, "the CreateTopics was answered before the kill: nothing tested"
        assert len(made()) < topics * partitions, "every directory made: nothing tested"
        for dir in made()[::3]:  # a power loss before the grouped fsyncs: no partition.metadata
            partition_metadata.path_in(dir).unlink(missing_ok=True)

        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        listed = admin.list_topics(timeout=20).topics
        for name in names:  # each whole: here all, as the one write came before any directory
            assert name in listed, name
            assert listed[name].error is None
            assert sorted(listed[name].partitions) == list(range(partitions))
            assert all(p.error is None for p in listed[name].partitions.values())

        records = [(n, p, f"{n}/{p}".encode()) for n in names for p in range(partitions)]
        produce(broker.bootstrap, records)
        broker.kill()
        broker.start()
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "check",
                "enable.auto.commit": False,
            }
        )
        consumer.assign([TopicPartition(n, p, 0) for n, p, _ in records])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        try:
            while len(got) < len(records) and time.monotonic() < deadline:
                for m in consumer.consume(1000, timeout=1):
                    assert m.error() is None, m.error()
                    got.append(m.value())
        finally:
            consumer.close()
        assert sorted(got) == sorted(v for _, _, v in records)
