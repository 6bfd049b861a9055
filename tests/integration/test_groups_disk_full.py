"""A consumer group on a full disk, caused for real: the broker's data directory on a tmpfs.

While ``__consumer_offsets`` cannot be written the coordinator answers as Kafka does (a commit
gets NOT_COORDINATOR, and FindCoordinator COORDINATOR_NOT_AVAILABLE while the partition is
offline), so the members back off instead of rebalancing over and over (these three
kafka-python members rebalanced about 8 times a second before). Once space is freed the group
recovers by itself: every committed offset is kept and no record before it is delivered again,
also after a restart.
"""

from __future__ import annotations

import errno
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.tmpfs import mounted_tmpfs

pytestmark = pytest.mark.integration

DISK_BYTES = 24 << 20
TOPIC = "t"
WINDOW_S = 10.0
MAX_REBALANCES_PER_S = 0.5  # at most one per 5 s offline (store_failures.OFFLINE_MS)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of DISK_BYTES (root only: CI runs as root)."""
    with mounted_tmpfs(tmp_path / "disk", f"size={DISK_BYTES}") as mount:
        yield mount


def _fill(path: Path) -> None:
    """Write ``path`` until the filesystem is full (unbuffered: nothing left to flush)."""
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 20, 4096, 1):
            while True:
                try:
                    f.write(b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break


def _join_groups(metrics_port: int) -> float:
    """JoinGroup requests the broker has handled (its Prometheus counter)."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith('tiered_mq_requests_total{api="join_group"}'):
            return float(line.rpartition(" ")[2])
    return 0.0


class _Member(threading.Thread):
    """A kafka-python group member polling in a thread of its own, as an application does;
    ``commit()`` asks it to commit what it read and waits until it has."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.consumer = KafkaConsumer(
            TOPIC,
            bootstrap_servers=bootstrap,
            group_id="g",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        self.values: list[bytes] = []
        self._commit = threading.Event()
        self._committed = threading.Event()
        self._stopping = threading.Event()
        self.start()

    def run(self) -> None:
        while not self._stopping.is_set():
            for records in self.consumer.poll(timeout_ms=200).values():
                self.values += [r.value for r in records]
            if self._commit.is_set():
                self._commit.clear()
                self.consumer.commit()
                self._committed.set()
        self.consumer.close()

    def commit(self) -> None:
        self._committed.clear()
        self._commit.set()
        assert self._committed.wait(30), "commit did not return"

    def close(self) -> None:
        self._stopping.set()
        self.join(30)


def _read(members: list[_Member], n: int, timeout: float) -> list[bytes]:
    """The values the members read, once they are ``n`` or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while sum(len(m.values) for m in members) < n and time.monotonic() < deadline:
        time.sleep(0.1)
    return sorted(v for m in members for v in m.values)


def _produce(bootstrap: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(TOPIC, value, partition=i % 2)
    assert producer.flush(20) == 0


def _committed(bootstrap: str) -> list[int]:
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "g"})
    try:
        tps = reader.committed([TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)], timeout=20)
        return [tp.offset for tp in tps]
    finally:
        reader.close()


def _fill_offsets_log(bootstrap: str) -> KafkaError:
    """Commit under another group (the same ``__consumer_offsets`` partition: there is one)
    until an append fails: the last page of the segment had room for a few. Its error."""
    committer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "filler", "enable.auto.commit": False}
    )
    try:
        for _ in range(500):
            try:
                committer.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                return error
        raise AssertionError("500 commits fitted on a full disk")
    finally:
        committer.close()


def test_group_backs_off_on_a_full_disk_and_recovers(small_disk: Path, tmp_path: Path) -> None:
    metrics_port = free_port()
    configs = ["--config", "offsets.topic.num.partitions=1", "--metrics-port", str(metrics_port)]
    broker = BrokerProcess(small_disk / "data", extra_args=configs)
    broker.log_path = tmp_path / "broker.log"  # off the full disk
    with broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(20)
        old = [b"old-%d" % i for i in range(10)]
        _produce(broker.bootstrap, old)
        members = [_Member(broker.bootstrap) for _ in range(2)]
        try:
            assert _read(members, 10, 30) == sorted(old)
            for member in members:
                member.commit()
            assert _committed(broker.bootstrap) == [5, 5]

            _fill(small_disk / "filler")
            error = _fill_offsets_log(broker.bootstrap)
            assert error.code() == KafkaError.NOT_COORDINATOR, error  # as KAFKA_STORAGE_ERROR

            before = _join_groups(metrics_port)
            start = time.monotonic()
            members.append(_Member(broker.bootstrap))  # a rebalance that cannot be stored
            time.sleep(WINDOW_S)
            joins = _join_groups(metrics_port) - before
            rebalances_per_s = joins / len(members) / (time.monotonic() - start)
            assert rebalances_per_s < MAX_REBALANCES_PER_S, f"{joins:.0f} JoinGroups"

            (small_disk / "filler").unlink()  # space again: the group recovers by itself
            new = [b"new-%d" % i for i in range(10)]
            _produce(broker.bootstrap, new)
            assert _read(members, 20, 60) == sorted(old + new)  # each once: none read again
            assert _committed(broker.bootstrap) == [5, 5]  # failed commits changed nothing
            for member in members:
                member.commit()
        finally:
            for member in members:
                member.close()
        assert _committed(broker.bootstrap) == [10, 10]

        broker.restart()
        assert _committed(broker.bootstrap) == [10, 10]
