"""Offline partitions with real clients: a partition whose log cannot open, caused for real.

A file lies where the directory of partition 1 of a keyed topic goes (the tests run as root,
so a directory without permissions would not stop the broker). CreateTopics answers success
(as Kafka's controller does: the topic is committed, the broker's log failure is apart), a retry
TOPIC_ALREADY_EXISTS; partitions 0 and 2 are served and partition 1 is offline: Metadata
answers it LEADER_NOT_AVAILABLE with no leader, as Kafka answers a partition whose only
replica's log dir failed. What a user sees: producers hold that partition's records
(a keyed record never moves to another partition) and report them undelivered when their
delivery timeout runs out; the other partitions and topics work; the broker stays up. Once the
file is gone, the next start opens the partition and it takes records again.

A partition whose existing log cannot be opened at start (a directory where its segment file
goes) stops the start, naming the file, as Kafka stops a broker whose only log dir failed; with
the cause removed the broker starts and every acknowledged record is there.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from confluent_kafka import TopicPartition as TP
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer
from kafka.errors import KafkaTimeoutError

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import take
from tests.integration.test_broker_zookeeper import zk_broker
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.cli import main
from tiered_mq.coordination import znodes

pytestmark = pytest.mark.integration

KEYS = [f"key-{i}".encode() for i in range(16)]
TIMEOUT_MS = 4000


def _create(bootstrap: str, *names: str) -> dict[str, KafkaError | None]:
    """Create 3-partition topics; each name maps to its error (None: created)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    outcome: dict[str, KafkaError | None] = {}
    for name, future in admin.create_topics([NewTopic(n, 3, 1) for n in names]).items():
        try:
            future.result(15)
            outcome[name] = None
        except KafkaException as e:
            outcome[name] = e.args[0]
    return outcome


def _leaders(bootstrap: str, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (leader, error code) as librdkafka reads the Metadata answer."""
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    parts = md.topics[topic].partitions.values()
    return {p.id: (p.leader, p.error.code() if p.error else 0) for p in parts}


def _produce(bootstrap: str, topic: str, keys: list[bytes]) -> dict[bytes, Message]:
    """Send one record per key with Java's murmur2 placement; each key maps to its delivery
    report (delivered, or failed once message.timeout.ms ran out)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "partitioner": "murmur2_random",
            "message.timeout.ms": TIMEOUT_MS,
            "linger.ms": 5,
        }
    )
    reports: dict[bytes, Message] = {}

    def done(err: KafkaError | None, msg: Message) -> None:
        key = msg.key()
        assert isinstance(key, bytes)
        reports[key] = msg

    for key in keys:
        producer.produce(topic, key=key, value=b"v-" + key, on_delivery=done)
    assert producer.flush(TIMEOUT_MS / 1000 + 20) == 0
    return reports


def _commit(bootstrap: str, group: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` (partition -> offset) of ``keyed`` for ``group``, with no member."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(
            offsets=[TP("keyed", p, offset) for p, offset in offsets.items()], asynchronous=False
        )
    finally:
        consumer.close()


def _read(bootstrap: str, topic: str, n: int) -> list[Message]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "offline-reader", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TP(topic, p, 0) for p in range(3)])
        return take(consumer, n, timeout=20)
    finally:
        consumer.close()


def test_an_offline_partition_holds_its_records_and_the_rest_is_served(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data) as broker:
        (data / "keyed-1").write_text("not a directory")
        # created, as Kafka's controller answers; its partition 1 is offline
        assert _create(broker.bootstrap, "keyed", "ref") == {"keyed": None, "ref": None}
        retried = _create(broker.bootstrap, "keyed")["keyed"]
        assert retried is not None and retried.code() == KafkaError.TOPIC_ALREADY_EXISTS
        assert _leaders(broker.bootstrap, "keyed") == {
            0: (0, 0),
            1: (-1, KafkaError.LEADER_NOT_AVAILABLE),
            2: (0, 0),
        }

        placed = {k: m.partition() for k, m in _produce(broker.bootstrap, "ref", KEYS).items()}
        assert all(m is not None for m in placed.values())
        held = [k for k in KEYS if placed[k] == 1]
        served = [k for k in KEYS if placed[k] != 1]
        assert held and served  # both kinds among the keys (murmur2 over 3 partitions)

        reports = _produce(broker.bootstrap, "keyed", KEYS)
        for key in served:  # delivered where the key belongs
            assert reports[key].error() is None and reports[key].partition() == placed[key]
        for key in held:  # held for partition 1 until the timeout, never moved elsewhere
            err = reports[key].error()
            assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT
            assert reports[key].partition() == 1

        java_like = KafkaProducer(
            bootstrap_servers=broker.bootstrap,
            max_block_ms=TIMEOUT_MS,
            delivery_timeout_ms=TIMEOUT_MS,
            request_timeout_ms=TIMEOUT_MS - 1000,
            linger_ms=0,
        )
        try:  # kafka-python's default partitioner is murmur2 as well
            sent = java_like.send("keyed", key=served[0], value=b"kafka-python").get(10)
            assert sent.partition == placed[served[0]]
            with pytest.raises(KafkaTimeoutError):
                java_like.send("keyed", key=held[0], value=b"kafka-python").get(10)
        finally:
            java_like.close(5)

        described = CliRunner().invoke(
            main, ["topics", "describe", "keyed", "-b", broker.bootstrap]
        )
        assert described.exit_code == 0, described.output
        rows = {line.split()[0]: line.split() for line in described.output.splitlines()[2:5]}
        assert rows["1"][1:2] == ["none"] and rows["1"][-3:] == ["-", "-", "-"]
        assert rows["0"][1] == "0" and rows["2"][1] == "0"

        got = _read(broker.bootstrap, "keyed", len(served) + 2)
        assert sorted((m.partition(), m.key()) for m in got) == sorted(
            [(placed[k], k) for k in served] + [(placed[served[0]], served[0])]
        )
        _commit(broker.bootstrap, "watchers", dict.fromkeys(range(3), 0))
        described = CliRunner().invoke(
            main, ["groups", "describe", "watchers", "-b", broker.bootstrap]
        )
        assert described.exit_code == 0, described.output
        rows = {line.split()[1]: line.split() for line in described.output.splitlines()[2:5]}
        assert rows["1"][2:5] == ["0", "-", "-"]  # committed 0, log end and lag unknown
        for p in ("0", "2"):  # committed 0: the lag is the log end
            assert rows[p][3] == rows[p][4] != "-"
        assert "1 partition(s) whose log end is unknown" in described.output
        assert broker.running

        broker.stop()
        (data / "keyed-1").unlink()  # the cause removed: the next start opens the partition
        broker.start()
        assert _leaders(broker.bootstrap, "keyed") == {0: (0, 0), 1: (0, 0), 2: (0, 0)}
        again = _produce(broker.bootstrap, "keyed", held)
        assert all(m.error() is None and m.partition() == 1 for m in again.values())
        got = _read(broker.bootstrap, "keyed", len(KEYS) + 1)
        assert sorted(m.key() for m in got if m.partition() == 1) == sorted(held)
        assert len(got) == len(KEYS) + 1


def test_a_log_that_cannot_open_at_start_stops_the_start_until_its_cause_is_gone(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data) as broker:
        assert _create(broker.bootstrap, "keyed") == {"keyed": None}
        reports = _produce(broker.bootstrap, "keyed", KEYS)
        assert all(m.error() is None for m in reports.values())
        broker.stop()
        index = data / "keyed-1" / "00000000000000000000.index"
        moved = tmp_path / "index.saved"
        if index.exists():
            shutil.move(index, moved)
        index.mkdir()  # a directory where the segment's index file goes
        with pytest.raises(Exception, match="broker exited"):
            broker.start()
        assert "00000000000000000000.index" in broker.log_tail(5)
        index.rmdir()
        if moved.exists():
            shutil.move(moved, index)
        broker.start()
        assert _leaders(broker.bootstrap, "keyed") == {0: (0, 0), 1: (0, 0), 2: (0, 0)}
        got = _read(broker.bootstrap, "keyed", len(KEYS))
        assert sorted(m.key() for m in got) == sorted(KEYS)


def test_with_zookeeper_an_offline_partition_holds_back_no_other_topic(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    """Topics written by another tool (kazoo, as Kafka's ZooKeeper tools write them) are opened
    when the broker sees the change; ``alpha``'s blocked partition is offline, and ``beta``,
    written after it, is served all the same. Once the file is gone, the next metadata change
    opens ``alpha`` with no restart."""
    chroot = zookeeper.connect_string(zookeeper.new_chroot())
    data = tmp_path / "data"
    zk = kazoo_client(chroot)
    try:
        with zk_broker(data, chroot) as broker:
            (data / "alpha-0").write_text("not a directory")
            for name in ("alpha", "beta"):
                assignment = {"version": 2, "partitions": {"0": [0]}}
                zk.create(znodes.topic(name), json.dumps(assignment).encode())
                _wait(lambda name=name: name in _topics(broker.bootstrap), name)
            _wait(lambda: _leaders(broker.bootstrap, "beta") == {0: (0, 0)}, "beta served")
            producer = Producer({"bootstrap.servers": broker.bootstrap, "message.timeout.ms": 8000})
            errors: list[KafkaError | None] = []
            producer.produce("beta", b"b", on_delivery=lambda e, m: errors.append(e))
            assert producer.flush(15) == 0 and errors == [None]
            assert _leaders(broker.bootstrap, "alpha") == {0: (-1, KafkaError.LEADER_NOT_AVAILABLE)}

            (data / "alpha-0").unlink()
            assignment = {"version": 2, "partitions": {"0": [0]}}
            zk.create(znodes.topic("gamma"), json.dumps(assignment).encode())  # a change
            _wait(lambda: _leaders(broker.bootstrap, "alpha") == {0: (0, 0)}, "alpha back")
            producer.produce("alpha", b"a", on_delivery=lambda e, m: errors.append(e))
            assert producer.flush(15) == 0 and errors == [None, None]
            assert broker.running
    finally:
        zk.stop()


def _topics(bootstrap: str) -> set[str]:
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return set(md.topics)


def _wait(check: Callable[[], object], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
