"""Transaction admin APIs (DescribeProducers, DescribeTransactions, ListTransactions,
WriteTxnMarkers) with real clients: confluent-kafka producers write (idempotent, a committed
transaction, an open one) and kafka-python 3's ``KafkaAdminClient`` inspects them, and aborts a
stuck one, as ``kafka-transactions.sh`` would."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka import TopicPartition as ConfluentTP
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import AbortTransactionSpec, KafkaAdminClient
from kafka.admin._transactions import TransactionListing, TransactionState
from kafka.errors import (
    InvalidProducerEpochError,
    TransactionalIdNotFoundError,
    UnknownTopicOrPartitionError,
)
from kafka.structs import TopicPartition

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

TIMEOUT = 20
TXN_TIMEOUT_MS = 45_000
IDEMPOTENT_RECORDS, COMMITTED_RECORDS, OPEN_RECORDS = 5, 3, 2


@pytest.fixture
def admin(broker: BrokerProcess) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        yield client
    finally:
        client.close()


def _topic(bootstrap: str) -> str:
    name = f"txadm-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(TIMEOUT)
    return name


def _txn_producer(bootstrap: str, txn_id: str) -> Producer:
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "linger.ms": 5,
        }
    )
    p.init_transactions(TIMEOUT)
    return p


def _partition_0_reader(bootstrap: str, topic: str, isolation: str) -> Consumer:
    """A consumer assigned partition 0 of ``topic`` from offset 0."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    c.assign([ConfluentTP(topic, 0, 0)])
    return c


def _offsets_by_value(bootstrap: str, topic: str, expect: int) -> dict[bytes, int]:
    """value -> offset of every record of partition 0, read_uncommitted (open ones included)."""
    c = _partition_0_reader(bootstrap, topic, "read_uncommitted")
    found: dict[bytes, int] = {}
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(found) < expect and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise KafkaException(m.error())
            value, offset = m.value(), m.offset()
            assert value is not None and offset is not None
            found[value] = offset
    finally:
        c.close()
    assert len(found) == expect
    return found


def stuck_transaction(bootstrap: str, topic: str) -> Producer:
    """A transactional producer holding 3 records (``stuck-i``) of partition 0 in a transaction
    it does not end, then 4 plain records (``after-i``) behind it."""
    stuck = _txn_producer(bootstrap, f"stuck-{uuid.uuid4().hex[:6]}")
    stuck.begin_transaction()
    for i in range(3):
        stuck.produce(topic, b"stuck-%d" % i, partition=0)
    stuck.flush(TIMEOUT)
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(4):
        plain.produce(topic, b"after-%d" % i, partition=0)
    plain.flush(TIMEOUT)
    return stuck


def read_committed(bootstrap: str, topic: str, seconds: float, expect: int = 0) -> list[bytes]:
    """Values of partition 0 a read_committed consumer gets from offset 0 in ``seconds`` (or
    until it has ``expect`` of them)."""
    c = _partition_0_reader(bootstrap, topic, "read_committed")
    values: list[bytes] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and (expect == 0 or len(values) < expect):
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                values.append(m.value() or b"")
    finally:
        c.close()
    return values


def _listed(admin: KafkaAdminClient, **filters: Any) -> dict[str, TransactionListing]:
    by_broker = admin.list_transactions(**filters)
    return {t.transactional_id: t for listings in by_broker.values() for t in listings}


def test_open_committed_and_idempotent_producers(
    broker: BrokerProcess, admin: KafkaAdminClient
) -> None:
    topic = _topic(broker.bootstrap)
    tp = TopicPartition(topic, 0)
    open_id, done_id = f"open-{uuid.uuid4().hex[:6]}", f"done-{uuid.uuid4().hex[:6]}"
    started_ms = int(time.time() * 1000)

    idempotent = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(IDEMPOTENT_RECORDS):
        idempotent.produce(topic, f"i{i}".encode(), partition=0)
        idempotent.flush(TIMEOUT)  # one batch per record
    done = _txn_producer(broker.bootstrap, done_id)
    done.begin_transaction()
    for i in range(COMMITTED_RECORDS):
        done.produce(topic, f"d{i}".encode(), partition=0)
    done.commit_transaction(TIMEOUT)
    opened = _txn_producer(broker.bootstrap, open_id)
    opened.begin_transaction()
    for i in range(OPEN_RECORDS):
        opened.produce(topic, f"o{i}".encode(), partition=0)
    opened.flush(TIMEOUT)  # sent, but the transaction stays open
    total = IDEMPOTENT_RECORDS + COMMITTED_RECORDS + OPEN_RECORDS
    open_start = _offsets_by_value(broker.bootstrap, topic, total)[b"o0"]

    # DescribeTransactions: the coordinator's view of both transactional ids
    described = admin.describe_transactions([open_id, done_id])
    o, d = described[open_id], described[done_id]
    assert o.state == TransactionState.ONGOING
    assert o.topic_partitions == {tp}
    assert o.transaction_timeout_ms == TXN_TIMEOUT_MS
    assert started_ms <= o.transaction_start_time_ms <= int(time.time() * 1000)
    assert d.state == TransactionState.COMPLETE_COMMIT and d.topic_partitions == set()
    assert o.producer_id != d.producer_id and o.producer_epoch == d.producer_epoch == 0
    with pytest.raises(TransactionalIdNotFoundError):
        admin.describe_transactions([f"nope-{uuid.uuid4().hex[:6]}"])

    # ListTransactions: everything, then each filter
    listed = _listed(admin)
    assert (listed[open_id].producer_id, listed[open_id].state) == (
        o.producer_id,
        TransactionState.ONGOING,
    )
    assert (listed[done_id].producer_id, listed[done_id].state) == (
        d.producer_id,
        TransactionState.COMPLETE_COMMIT,
    )
    assert set(_listed(admin, state_filters=["Ongoing"])) == {open_id}
    assert set(_listed(admin, state_filters=["CompleteCommit"])) == {done_id}
    assert set(_listed(admin, producer_id_filters=[d.producer_id])) == {done_id}
    assert set(_listed(admin, transactional_id_pattern="open-.*")) == {open_id}
    assert set(_listed(admin, duration_filter_ms=3_600_000)) == set()
    assert {open_id, done_id} <= set(_listed(admin, duration_filter_ms=0))

    # DescribeProducers: the partition leader's producer state
    producers = {p.producer_id: p for p in admin.describe_producers([tp])[tp].active_producers}
    assert len(producers) == 3
    (idempotent_pid,) = set(producers) - {o.producer_id, d.producer_id}
    ip, dp, op = producers[idempotent_pid], producers[d.producer_id], producers[o.producer_id]
    assert (ip.producer_epoch, ip.last_sequence) == (0, IDEMPOTENT_RECORDS - 1)
    assert ip.current_transaction_start_offset == -1
    assert (dp.producer_epoch, dp.last_sequence) == (d.producer_epoch, COMMITTED_RECORDS - 1)
    assert dp.current_transaction_start_offset == -1
    assert (op.producer_epoch, op.last_sequence) == (o.producer_epoch, OPEN_RECORDS - 1)
    assert op.current_transaction_start_offset == open_start
    assert all(started_ms <= p.last_timestamp <= time.time() * 1000 for p in producers.values())
    node_id = next(iter(admin.list_transactions()))
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.describe_producers([TopicPartition(topic, 5)], broker_id=node_id)

    # abort the open transaction: completed, and no longer holding the partition
    opened.abort_transaction(TIMEOUT)
    aborted = admin.describe_transactions([open_id])[open_id]
    assert aborted.state == TransactionState.COMPLETE_ABORT
    assert aborted.topic_partitions == set()
    assert set(_listed(admin, state_filters=["Ongoing"])) == set()
    assert set(_listed(admin, state_filters=["CompleteAbort"])) == {open_id}
    producers = {p.producer_id: p for p in admin.describe_producers([tp])[tp].active_producers}
    assert producers[o.producer_id].current_transaction_start_offset == -1
    assert producers[o.producer_id].last_sequence == OPEN_RECORDS - 1
    for p in (idempotent, done, opened):
        p.close()


def test_an_admin_aborts_a_stuck_transaction(
    broker: BrokerProcess, admin: KafkaAdminClient
) -> None:
    topic = _topic(broker.bootstrap)
    tp = TopicPartition(topic, 0)
    stuck = stuck_transaction(broker.bootstrap, topic)
    # the open transaction holds the last stable offset at 0: read_committed sees nothing
    assert read_committed(broker.bootstrap, topic, 3) == []
    (open_one,) = [
        p
        for p in admin.describe_producers([tp])[tp].active_producers
        if p.current_transaction_start_offset >= 0
    ]
    assert open_one.current_transaction_start_offset == 0 and open_one.coordinator_epoch == -1
    pid, epoch = open_one.producer_id, open_one.producer_epoch
    if epoch > 0:  # an older epoch than the partition knows is refused (none below 0 to try)
        with pytest.raises(InvalidProducerEpochError):
            admin.abort_transaction(AbortTransactionSpec(tp, pid, epoch - 1))
    admin.abort_transaction(AbortTransactionSpec(tp, pid, epoch, open_one.coordinator_epoch))
    # the ABORT marker is in: the plain records are readable, the aborted ones never are
    expected = [b"after-%d" % i for i in range(4)]
    assert read_committed(broker.bootstrap, topic, TIMEOUT, expect=4) == expected
    after = {p.producer_id: p for p in admin.describe_producers([tp])[tp].active_producers}
    assert after[pid].current_transaction_start_offset == -1
    # the producer's own coordinator can still end it: its ABORT marker lands as a no-op
    stuck.abort_transaction(TIMEOUT)
    assert read_committed(broker.bootstrap, topic, TIMEOUT, expect=4) == expected
    # DescribeProducers now reports the coordinator epoch of that last marker (ours: 0)
    ended = {p.producer_id: p for p in admin.describe_producers([tp])[tp].active_producers}
    assert ended[pid].coordinator_epoch == 0


def test_describe_producers_last_timestamp_follows_the_marker(broker: BrokerProcess) -> None:
    """Kafka's ``appendEndTxnMarker`` moves the producer's ``lastTimestamp`` to the COMMIT
    marker's timestamp, and DescribeProducers answers it, after a restart too (the producer
    snapshot keeps it). It answered the records' timestamp, an hour old here."""
    topic = _topic(broker.bootstrap)
    tp = TopicPartition(topic, 0)
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    producer = _txn_producer(broker.bootstrap, f"ts-{uuid.uuid4().hex[:6]}")
    producer.begin_transaction()
    producer.produce(topic, b"late", partition=0, timestamp=an_hour_ago)
    producer.flush(TIMEOUT)

    def last_timestamp() -> int:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            (entry,) = admin.describe_producers([tp])[tp].active_producers
        finally:
            admin.close()
        return int(entry.last_timestamp)

    assert last_timestamp() == an_hour_ago  # the data batch's
    before = int(time.time() * 1000)
    producer.commit_transaction(TIMEOUT)
    after = int(time.time() * 1000)
    committed = last_timestamp()
    assert before <= committed <= after  # the marker's: written by the broker at the commit
    producer.close()
    broker.restart()
    assert last_timestamp() == committed
