"""Exactly-once transactions against a real broker with confluent-kafka (librdkafka).

Transactional producers (commit, abort, offsets in the transaction), read_committed and
read_uncommitted consumers (a read_committed one waits for offsets a transaction holds pending,
KIP-447), zombie fencing across a producer restart, a consume-transform-produce loop that stays
exactly-once when its producer is replaced, and a broker restart mid-transaction (the
coordinator aborts the transaction when it times out).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

TIMEOUT = 20


def _topic(bootstrap: str, partitions: int = 2) -> str:
    name = f"txn-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(TIMEOUT)
    return name


def _consumer(bootstrap: str, group: str, isolation: str = "read_committed") -> Consumer:
    """A group member without auto-commit, from the earliest offset by default."""
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )


def _producer(bootstrap: str, txn_id: str, **extra: Any) -> Producer:
    p = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, **extra}
    )
    p.init_transactions(TIMEOUT)
    return p


def _read_all(
    bootstrap: str, topic: str, isolation: str, expect: int | None = None, partitions: int = 2
) -> list[bytes]:
    """Every value of ``topic`` visible at ``isolation`` (reads to the end of each partition)."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    eof: set[int] = set()
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    eof.add(m.partition())
                    if len(eof) == partitions and (expect is None or len(values) >= expect):
                        break
                    continue
                raise KafkaException(m.error())
            eof.discard(m.partition())
            values.append(m.value())
    finally:
        c.close()
    return values


def test_commit_and_abort_visible_per_isolation_level(broker: BrokerProcess) -> None:
    topic = _topic(broker.bootstrap)
    p = _producer(broker.bootstrap, f"t-{uuid.uuid4().hex[:6]}")
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, f"c{i}".encode(), partition=i % 2)
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()
    for i in range(6):
        p.produce(topic, f"a{i}".encode(), partition=i % 2)
    p.flush(TIMEOUT)
    p.abort_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, b"c-last", partition=1)
    p.commit_transaction(TIMEOUT)

    committed = _read_all(broker.bootstrap, topic, "read_committed", expect=11)
    assert sorted(committed) == sorted([f"c{i}".encode() for i in range(10)] + [b"c-last"])
    everything = _read_all(broker.bootstrap, topic, "read_uncommitted", expect=17)
    assert len(everything) == 17
    assert {v for v in everything if v.startswith(b"a")} == {f"a{i}".encode() for i in range(6)}


def test_open_transaction_holds_back_read_committed(broker: BrokerProcess) -> None:
    topic = _topic(broker.bootstrap, 1)
    p = _producer(broker.bootstrap, f"t-{uuid.uuid4().hex[:6]}")
    p.begin_transaction()
    p.produce(topic, b"pending", partition=0)
    p.flush(TIMEOUT)
    # a non-transactional write after the open transaction is held back too (LSO)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, b"plain", partition=0)
    plain.flush(TIMEOUT)
    assert _read_all(broker.bootstrap, topic, "read_committed", partitions=1) == []
    assert len(_read_all(broker.bootstrap, topic, "read_uncommitted", 2, partitions=1)) == 2
    p.commit_transaction(TIMEOUT)
    assert _read_all(broker.bootstrap, topic, "read_committed", 2, partitions=1) == [
        b"pending",
        b"plain",
    ]


def test_new_instance_fences_the_zombie_and_aborts_its_transaction(
    broker: BrokerProcess,
) -> None:
    topic = _topic(broker.bootstrap)
    txn_id = f"t-{uuid.uuid4().hex[:6]}"
    zombie = _producer(broker.bootstrap, txn_id)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie", partition=0)
    zombie.flush(TIMEOUT)
    fresh = _producer(broker.bootstrap, txn_id)  # aborts the zombie's open transaction
    fresh.begin_transaction()
    fresh.produce(topic, b"fresh", partition=1)
    fresh.commit_transaction(TIMEOUT)
    with pytest.raises(KafkaException):
        zombie.produce(topic, b"late", partition=0)
        zombie.commit_transaction(TIMEOUT)
    assert _read_all(broker.bootstrap, topic, "read_committed", 1) == [b"fresh"]


def test_read_committed_consumer_waits_for_pending_transactional_offsets(
    broker: BrokerProcess,
) -> None:
    """KIP-447: librdkafka's read_committed consumer sends OffsetFetch v7 with require_stable
    and retries UNSTABLE_OFFSET_COMMIT, so it starts at the transaction's offset once the
    transaction commits, never at the stale committed one."""
    topic = _topic(broker.bootstrap, 1)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(30):
        plain.produce(topic, f"m{i:02d}".encode(), partition=0)
    plain.flush(TIMEOUT)
    group = f"g-{uuid.uuid4().hex[:6]}"

    uncommitted = _consumer(broker.bootstrap, group, "read_uncommitted")
    waiting = _consumer(broker.bootstrap, group)
    try:
        uncommitted.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
        p = _producer(broker.bootstrap, f"t-{uuid.uuid4().hex[:6]}")
        p.begin_transaction()
        meta = uncommitted.consumer_group_metadata()
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 20)], meta, TIMEOUT)
        # without require_stable (v7 with false): the committed offset, pending one hidden
        (tp,) = uncommitted.committed([TopicPartition(topic, 0)], TIMEOUT)
        assert (tp.offset, tp.error) == (5, None)
        with pytest.raises(KafkaException, match="Timed out"):  # retries UNSTABLE_OFFSET_COMMIT
            waiting.committed([TopicPartition(topic, 0)], 3)
        waiting.assign([TopicPartition(topic, 0)])  # starts at the committed offset
        early = [m for m in (waiting.poll(0.5) for _ in range(6)) if m and not m.error()]
        assert early == []
        p.commit_transaction(TIMEOUT)
        offsets: list[int] = []
        deadline = time.monotonic() + TIMEOUT
        while len(offsets) < 10 and time.monotonic() < deadline:
            m = waiting.poll(0.5)
            if m is not None and not m.error():
                offsets.append(m.offset())
        assert offsets == list(range(20, 30))
    finally:
        waiting.close()
        uncommitted.close()


def _transform_loop(bootstrap: str, src: str, dst: str, group: str, txn_id: str, limit: int) -> int:
    """Consume up to ``limit`` records of ``src``, write them upper-cased to ``dst`` and commit
    the consumed offsets in the same transaction; returns how many were processed."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([src])
    producer = _producer(bootstrap, txn_id)
    done = 0
    deadline = time.monotonic() + TIMEOUT
    try:
        while done < limit and time.monotonic() < deadline:
            msgs = [m for m in consumer.consume(min(5, limit - done), 1.0) if not m.error()]
            if not msgs:
                continue
            producer.begin_transaction()
            for m in msgs:
                producer.produce(dst, m.value().upper(), partition=m.partition())
            producer.send_offsets_to_transaction(
                consumer.position(consumer.assignment()),
                consumer.consumer_group_metadata(),
                TIMEOUT,
            )
            producer.commit_transaction(TIMEOUT)
            done += len(msgs)
    finally:
        consumer.close()
    return done


def test_consume_transform_produce_is_exactly_once_across_a_producer_restart(
    broker: BrokerProcess,
) -> None:
    src, dst = _topic(broker.bootstrap), _topic(broker.bootstrap)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(40):
        plain.produce(src, f"m{i:02d}".encode(), partition=i % 2)
    plain.flush(TIMEOUT)
    group, txn_id = f"g-{uuid.uuid4().hex[:6]}", f"ctp-{uuid.uuid4().hex[:6]}"

    # a first instance processes some, then dies mid-transaction (never commits)
    first = _transform_loop(broker.bootstrap, src, dst, group, txn_id, 15)
    assert first >= 15
    zombie = _producer(broker.bootstrap, txn_id)
    zombie.begin_transaction()
    zombie.produce(dst, b"DUPLICATE", partition=0)
    zombie.flush(TIMEOUT)
    # the replacement takes over: the zombie's transaction is aborted, the rest processed once
    rest = _transform_loop(broker.bootstrap, src, dst, group, txn_id, 40 - first)
    assert first + rest == 40
    out = _read_all(broker.bootstrap, dst, "read_committed", 40)
    assert sorted(out) == sorted(f"M{i:02d}".encode() for i in range(40))


def _wait(pred: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)


@pytest.mark.slow
def test_broker_restart_mid_transaction_then_timeout_aborts(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    b = broker_factory(
        extra_args=["--config", "transaction.abort.timed.out.transaction.cleanup.interval.ms=200"]
    )
    topic = _topic(b.bootstrap)
    p = _producer(b.bootstrap, f"t-{uuid.uuid4().hex[:6]}", **{"transaction.timeout.ms": 3000})
    p.begin_transaction()
    p.produce(topic, b"committed-before", partition=0)
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, b"in-flight", partition=0)
    p.produce(topic, b"in-flight", partition=1)
    p.flush(TIMEOUT)
    b.restart()
    # after the restart the open transaction still holds back read_committed, then times out
    plain = Producer({"bootstrap.servers": b.bootstrap})
    plain.produce(topic, b"after", partition=1)
    plain.flush(TIMEOUT)
    got = _read_all(b.bootstrap, topic, "read_committed", 2)
    assert sorted(got) == [b"after", b"committed-before"]
    assert len(_read_all(b.bootstrap, topic, "read_uncommitted", 4)) == 4
    b.restart()  # the aborted-transaction index survives a restart too
    assert sorted(_read_all(b.bootstrap, topic, "read_committed", 2)) == [
        b"after",
        b"committed-before",
    ]
