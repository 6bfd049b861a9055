"""Log compaction on a running broker, with confluent-kafka (librdkafka).

- a compacted topic with many updates per key (small segments, a low dirty ratio, a short
  cleaner backoff) is compacted by the broker's cleaner: a consumer from offset 0 sees exactly
  one record per key below the active segment, the latest value of every key, and the
  partition directory got smaller; a record without a key is refused;
- ``__consumer_offsets`` shrinks after many commits, and the committed offsets are still right
  after a broker restart;
- a compacted topic written by one transactional producer (commit, abort, commit): once the
  cleaner removed the aborted transaction's data and, after ``delete.retention.ms``, its ABORT
  marker, a read_committed consumer still gets the records committed after it (Fetch lists no
  aborted transaction whose marker is gone);
- DeleteRecords (``AdminClient.delete_records``) on a ``compact`` topic is POLICY_VIOLATION and
  deletes nothing; on ``compact,delete`` it moves the log start offset.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import FETCH, BrokerProcess, request, stored_batches
from tests.integration.conftest import BrokerFactory
from tests.kafka_requests import fetch_body
from tiered_mq.hot import log_files
from tiered_mq.record.control import ControlType, decode_control_record

pytestmark = pytest.mark.integration

CLEANER_ARGS = [
    "--config",
    "log.cleaner.backoff.ms=300",
    "--config",
    "log.cleaner.min.cleanable.ratio=0.01",
    "--config",
    "offsets.topic.num.partitions=1",
    "--config",
    "offsets.topic.segment.bytes=4096",
]


def log_bytes(dir: Path) -> int:
    return sum(p.stat().st_size for p in dir.glob("*.log"))


def active_base(dir: Path) -> int:
    bases = [log_files.offset_from_file_name(p.name) for p in dir.glob("*.log")]
    return max(b for b in bases if b is not None)


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def consume_all(bootstrap: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    # "error": an out-of-range fetch shows up instead of silently jumping to the end
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "auto.offset.reset": "error"}
    )
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[tuple[int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + 30
        while (not out or out[-1][0] < high - 1) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert not msg.error(), msg.error()
            out.append((msg.offset(), msg.key(), msg.value()))
        return out
    finally:
        consumer.close()


def test_compacted_topic_keeps_the_latest_value_per_key(broker_factory: BrokerFactory) -> None:
    broker: BrokerProcess = broker_factory(extra_args=CLEANER_ARGS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = "compacted"
    configs = {"cleanup.policy": "compact", "segment.bytes": "16384"}
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)
    # Small batches: a batch above segment.bytes is refused (RECORD_LIST_TOO_LARGE, as in
    # Kafka), and one near it would fill a segment alone and leave nothing in it to compact.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 2, "batch.size": 4096})
    latest: dict[bytes, bytes] = {}
    for i in range(6000):
        key, value = f"key-{i % 25}".encode(), f"value-{i}-{'x' * 40}".encode()
        producer.produce(topic, key=key, value=value)
        latest[key] = value
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(15) == 0
    errors: list[KafkaError] = []
    producer.produce(topic, value=b"no key", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(15)
    assert errors and errors[0] is not None
    assert errors[0].code() in (KafkaError.INVALID_RECORD, KafkaError._INVALID_ARG, 2, 87)

    dir = broker.data_dir / f"{topic}-0"
    produced = log_bytes(dir)
    # Compaction is eventual (a pass is bounded by its offset map and segment groups): wait
    # until a reader sees each key once below the active segment, as Kafka guarantees.
    seen: list[tuple[int, bytes | None, bytes | None]] = []

    def compacted() -> bool:
        seen[:] = consume_all(broker.bootstrap, topic)
        active = active_base(dir)
        below = [key for offset, key, _ in seen if offset < active]
        return bool(seen) and len(below) == len(set(below))

    wait_for(compacted, timeout=60)
    assert log_bytes(dir) < produced // 2
    view: dict[bytes, bytes] = {}
    for _, key, value in seen:
        assert key is not None and value is not None
        view[key] = value
    assert view == latest
    offsets = [o for o, _, _ in seen]
    assert offsets == sorted(set(offsets)) and offsets[-1] == 5999


def test_consumer_offsets_shrink_and_survive_a_restart(broker_factory: BrokerFactory) -> None:
    broker: BrokerProcess = broker_factory(extra_args=CLEANER_ARGS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = "events"
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(15)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "g", "enable.auto.commit": False}
    )
    try:
        for i in range(400):
            offsets = [TopicPartition(topic, p, i * 10 + p) for p in range(3)]
            consumer.commit(offsets=offsets, asynchronous=False)
    finally:
        consumer.close()
    final = {p: 3990 + p for p in range(3)}
    dir = broker.data_dir / "__consumer_offsets-0"
    wait_for(lambda: len(list(dir.glob("*.log"))) > 1)
    peak = log_bytes(dir)
    wait_for(lambda: log_bytes(dir) < peak // 3)
    broker.restart()
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g"})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=15)
    except KafkaException as exc:  # pragma: no cover - shown in the failure
        raise AssertionError(exc) from exc
    finally:
        consumer.close()
    assert {tp.partition: tp.offset for tp in committed} == final


def read_committed(bootstrap: str, topic: str) -> dict[bytes | None, bytes | None]:
    """Key -> value of every record a read_committed consumer gets from offset 0 to the end."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "rc-reader",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
        }
    )
    out: dict[bytes | None, bytes | None] = {}
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise KafkaException(msg.error())
            out[msg.key()] = msg.value()
        raise AssertionError("no end of partition in time")
    finally:
        consumer.close()


def test_read_committed_gets_commits_after_a_compacted_away_abort(
    broker_factory: BrokerFactory,
) -> None:
    broker: BrokerProcess = broker_factory(extra_args=CLEANER_ARGS)
    bootstrap, topic = broker.bootstrap, "changelog"
    configs = {
        "cleanup.policy": "compact",
        "segment.bytes": "2048",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "1000",
    }
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "changelog-writer"})
    txn.init_transactions(15)
    for key, value, commit in [
        (b"k1", b"committed-1", True),
        (b"k2", b"aborted", False),
        (b"k3", b"committed-3", True),
    ]:
        txn.begin_transaction()
        txn.produce(topic, key=key, value=value, partition=0)
        txn.flush(15)
        if commit:
            txn.commit_transaction(15)
        else:
            txn.abort_transaction(15)
    expected = {b"k1": b"committed-1", b"k3": b"committed-3"}

    def transactional(seen: dict[bytes | None, bytes | None]) -> dict[bytes | None, bytes | None]:
        return {k: v for k, v in seen.items() if k in (b"k1", b"k2", b"k3")}

    assert transactional(read_committed(bootstrap, topic)) == expected

    [abort] = [
        h.base_offset
        for h, records in stored_batches(broker.port, topic, 0)
        if h.is_control and decode_control_record(records[0]).type is ControlType.ABORT
    ]
    plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    # Each round dirties the log (small batches: segments roll) so that the cleaner runs again:
    # one pass drops k2's data, a later one gives its now empty marker a delete horizon, and
    # one after delete.retention.ms drops the marker.
    deadline = time.monotonic() + 90
    while abort in {h.base_offset for h, _ in stored_batches(broker.port, topic, 0)}:
        assert time.monotonic() < deadline, "the ABORT marker was never compacted away"
        for i in range(40):
            plain.produce(topic, key=b"f%02d" % i, value=b"x" * 40, partition=0)
            plain.flush(15)
        time.sleep(1.5)
    assert transactional(read_committed(bootstrap, topic)) == expected
    body = fetch_body(topic, 0)
    body["isolation_level"] = 1  # READ_COMMITTED
    fetched = request(broker.port, FETCH, 11, body)["responses"][0]["partitions"][0]
    assert not fetched["aborted_transactions"]  # no transaction without its marker


def test_delete_records_needs_the_delete_cleanup_policy(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    policies = {"compact-only": "compact", "compact-delete": "compact,delete"}
    futures = admin.create_topics(
        [NewTopic(t, 1, 1, config={"cleanup.policy": p}) for t, p in policies.items()]
    )
    for future in futures.values():
        future.result(15)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for topic in policies:
        for i in range(10):
            producer.produce(topic, key=b"k%d" % i, value=b"v", partition=0)
    assert producer.flush(15) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "watermarks"})
    try:
        [refused] = admin.delete_records([TopicPartition("compact-only", 0, 5)]).values()
        with pytest.raises(KafkaException) as info:
            refused.result(15)
        assert info.value.args[0].code() == KafkaError.POLICY_VIOLATION
        watermarks = consumer.get_watermark_offsets(TopicPartition("compact-only", 0), timeout=10)
        assert watermarks == (0, 10)
        [accepted] = admin.delete_records([TopicPartition("compact-delete", 0, 5)]).values()
        assert accepted.result(15).low_watermark == 5
        watermarks = consumer.get_watermark_offsets(TopicPartition("compact-delete", 0), timeout=10)
        assert watermarks == (5, 10)
    finally:
        consumer.close()
