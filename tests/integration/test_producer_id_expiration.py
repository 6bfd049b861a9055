"""Producer id and transactional id expiration with real clients, against a broker with short
expirations (Kafka's ``producer.id.expiration.ms`` and ``transactional.id.expiration.ms``):
confluent-kafka idempotent producers restarted several times (a new producer id each time, as a
restarting service) leave the partition's producer state once idle, as kafka-python's
DescribeProducers shows; a producer that comes back after its id expired goes on producing; a
transactional id idle past its expiration is gone, after a broker restart too, and a producer
that reuses it gets a new producer id."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as ConfluentTP
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient
from kafka.errors import TransactionalIdNotFoundError
from kafka.structs import TopicPartition

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

TIMEOUT = 20
EXPIRATION_MS = 3000
SHORT_EXPIRATIONS = [
    "--config",
    f"producer.id.expiration.ms={EXPIRATION_MS}",
    "--config",
    "producer.id.expiration.check.interval.ms=500",
    "--config",
    f"transactional.id.expiration.ms={EXPIRATION_MS}",
    "--config",
    "transaction.remove.expired.transaction.cleanup.interval.ms=500",
]
RESTARTS, RECORDS = 4, 5


@pytest.fixture
def broker(broker_factory: Callable[..., BrokerProcess]) -> BrokerProcess:
    return broker_factory(extra_args=SHORT_EXPIRATIONS)


@pytest.fixture
def admin(broker: BrokerProcess) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        yield client
    finally:
        client.close()


def _topic(bootstrap: str) -> str:
    name = f"pidexp-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the result
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(TIMEOUT)
    return name


def _produce(producer: Producer, topic: str, values: list[bytes]) -> None:
    """Produce ``values`` to partition 0 and wait: every delivery must succeed."""
    failed: list[KafkaError] = []

    def delivered(err: KafkaError | None, _msg: Any) -> None:
        if err is not None:
            failed.append(err)

    for value in values:
        producer.produce(topic, value, partition=0, on_delivery=delivered)
    assert producer.flush(TIMEOUT) == 0
    assert failed == []


def _producer_ids(admin: KafkaAdminClient, tp: TopicPartition) -> set[int]:
    return {p.producer_id for p in admin.describe_producers([tp])[tp].active_producers}


def _eventually(check: Callable[[], bool], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.25)


def _values(bootstrap: str, topic: str, expect: int) -> list[bytes]:
    """Every value of partition 0, read_committed, in offset order."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        c.assign([ConfluentTP(topic, 0, 0)])
        out: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(out) < expect and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(msg.value())
        return out
    finally:
        c.close()


def test_restarted_idempotent_producers_expire(
    broker: BrokerProcess, admin: KafkaAdminClient
) -> None:
    topic = _topic(broker.bootstrap)
    tp = TopicPartition(topic, 0)
    sent: list[bytes] = []
    seen: set[int] = set()
    for restart in range(RESTARTS):  # a service restarted: a new producer id each time
        producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
        values = [b"r%d-%d" % (restart, i) for i in range(RECORDS)]
        _produce(producer, topic, values)
        sent += values
        seen |= _producer_ids(admin, tp)
    assert len(seen) == RESTARTS  # each instance was in the producer state
    _eventually(lambda: _producer_ids(admin, tp) == set())  # all idle: all expired

    # a long-lived producer idle past the expiration goes on (its next sequence is 5)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    first = [b"long-%d" % i for i in range(RECORDS)]
    _produce(producer, topic, first)
    (pid,) = _producer_ids(admin, tp)
    _eventually(lambda: _producer_ids(admin, tp) == set())
    later = [b"long-%d" % i for i in range(RECORDS, 2 * RECORDS)]
    _produce(producer, topic, later)
    described = admin.describe_producers([tp])[tp].active_producers
    assert [(p.producer_id, p.last_sequence) for p in described] == [(pid, 2 * RECORDS - 1)]
    sent += first + later
    assert _values(broker.bootstrap, topic, len(sent)) == sent  # all there, once, in order


def test_idle_transactional_id_expires_and_is_reused(
    broker: BrokerProcess, admin: KafkaAdminClient
) -> None:
    topic = _topic(broker.bootstrap)
    txn_id = f"svc-{uuid.uuid4().hex[:6]}"

    def transactional() -> Producer:
        p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id})
        p.init_transactions(TIMEOUT)
        return p

    producer = transactional()
    producer.begin_transaction()
    _produce(producer, topic, [b"first"])
    producer.commit_transaction(TIMEOUT)
    old_pid = admin.describe_transactions([txn_id])[txn_id].producer_id
    del producer

    def gone(client: KafkaAdminClient) -> bool:
        try:
            client.describe_transactions([txn_id])
        except TransactionalIdNotFoundError:
            return True
        return False

    _eventually(lambda: gone(admin))
    broker.restart()  # replays __transaction_state: the tombstone keeps it removed
    fresh = KafkaAdminClient(bootstrap_servers=broker.bootstrap)  # no reconnect backoff
    try:
        assert gone(fresh)
        producer = transactional()  # a new producer id, as for a new transactional id
        producer.begin_transaction()
        _produce(producer, topic, [b"second"])
        producer.commit_transaction(TIMEOUT)
        again = fresh.describe_transactions([txn_id])[txn_id]
        assert again.producer_id != old_pid and again.producer_epoch == 0
    finally:
        fresh.close()
    assert _values(broker.bootstrap, topic, 2) == [b"first", b"second"]
