"""TxnOffsetCommit offsets across a broker SIGKILL (confluent-kafka consume-transform-produce).

The offsets sent with ``send_offsets_to_transaction`` are acknowledged once they are in
``__consumer_offsets`` (a transactional batch); a crash at any point afterwards must neither
lose them (when the transaction commits) nor expose them (when it aborts). Committed offsets
are read back with ``Consumer.committed`` (OffsetFetch) by a read_committed member of the group
(it sends require_stable, KIP-447: while the offsets are pending it waits, and a
read_uncommitted member gets the older committed offsets).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_transactions import (
    TIMEOUT,
    _consumer,
    _producer,
    _read_all,
    _topic,
)

pytestmark = pytest.mark.integration

PARTITIONS = 2


def _committed(
    bootstrap: str,
    group: str,
    topic: str,
    isolation: str = "read_committed",
    timeout: float = TIMEOUT,
) -> dict[int, int]:
    c = _consumer(bootstrap, group, isolation)
    try:
        tps = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout)
        return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}
    finally:
        c.close()


def _source(bootstrap: str, count: int) -> str:
    src = _topic(bootstrap, PARTITIONS)
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        plain.produce(src, f"m{i:02d}".encode(), partition=i % PARTITIONS)
    plain.flush(TIMEOUT)
    return src


def _transform_step(
    consumer: Consumer, producer: Producer, dst: str, at_least: int
) -> dict[int, int]:
    """Begin a transaction, consume >= ``at_least`` records, write them to ``dst`` and send
    the consumed positions to the transaction (not committed); returns those positions."""
    producer.begin_transaction()
    got = 0
    deadline = time.monotonic() + TIMEOUT
    while got < at_least:
        assert time.monotonic() < deadline, "source records not consumed in time"
        for m in consumer.consume(at_least - got, 1.0):
            if m.error():
                continue
            value, partition = m.value(), m.partition()
            assert value is not None and partition is not None
            producer.produce(dst, value.upper(), partition=partition)
            got += 1
    positions = consumer.position(consumer.assignment())
    producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), TIMEOUT)
    return {tp.partition: tp.offset for tp in positions if tp.offset >= 0}


class Loop:
    """A consume-transform-produce loop of one group and one transactional id."""

    def __init__(self, b: BrokerProcess, count: int) -> None:
        self.src, self.dst = _source(b.bootstrap, count), _topic(b.bootstrap, PARTITIONS)
        self.group, self.txn_id = f"g-{uuid.uuid4().hex[:6]}", f"tx-{uuid.uuid4().hex[:6]}"
        self.consumer = _consumer(b.bootstrap, self.group)
        self.consumer.subscribe([self.src])
        self.producer = _producer(b.bootstrap, self.txn_id)

    def step(self, at_least: int) -> dict[int, int]:
        return _transform_step(self.consumer, self.producer, self.dst, at_least)


def test_committed_txn_offsets_survive_sigkill_right_after_commit(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    b = broker_factory()
    loop = Loop(b, 20)
    try:
        first = loop.step(6)
        loop.producer.commit_transaction(TIMEOUT)
        second = loop.step(6)
        loop.producer.commit_transaction(TIMEOUT)
        b.kill()
    finally:
        loop.consumer.close()
    assert second != first
    b.start()
    assert _committed(b.bootstrap, loop.group, loop.src) == second
    out = _read_all(b.bootstrap, loop.dst, "read_committed", sum(second.values()))
    assert len(out) == sum(second.values())


def test_offsets_sent_before_a_sigkill_are_committed_by_the_transaction(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    """The broker dies after acknowledging TxnOffsetCommit; the client then commits."""
    b = broker_factory()
    loop = Loop(b, 20)
    try:
        first = loop.step(4)
        loop.producer.commit_transaction(TIMEOUT)
        second = loop.step(6)
        b.kill()
        b.start()
        loop.producer.commit_transaction(TIMEOUT)
    finally:
        loop.consumer.close()
    assert second != first
    assert _committed(b.bootstrap, loop.group, loop.src) == second
    b.restart()
    assert _committed(b.bootstrap, loop.group, loop.src) == second


def test_offsets_of_a_transaction_aborted_after_a_sigkill_stay_invisible(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    """The broker dies after acknowledging TxnOffsetCommit; the transaction is then aborted
    (a new instance of the transactional producer fences the old one and aborts it)."""
    b = broker_factory()
    loop = Loop(b, 20)
    try:
        first = loop.step(4)
        loop.producer.commit_transaction(TIMEOUT)
        second = loop.step(6)
        b.kill()
    finally:
        loop.consumer.close()
    assert second != first
    b.start()
    # pending: hidden from a plain fetch; read_committed (require_stable) waits for the txn
    assert _committed(b.bootstrap, loop.group, loop.src, "read_uncommitted") == first
    with pytest.raises(KafkaException, match="Timed out"):
        _committed(b.bootstrap, loop.group, loop.src, timeout=3)
    _producer(b.bootstrap, loop.txn_id)  # InitProducerId aborts the open transaction
    assert _committed(b.bootstrap, loop.group, loop.src) == first
    assert len(_read_all(b.bootstrap, loop.dst, "read_committed", 4)) == sum(first.values())
    b.restart()  # the ABORT marker in __consumer_offsets drops them on load too
    assert _committed(b.bootstrap, loop.group, loop.src) == first
