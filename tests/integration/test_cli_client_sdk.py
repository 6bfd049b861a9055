"""The SDK against a real ``tiered-mq dev`` broker: semantics presets, retry/DLQ, transactions."""

from __future__ import annotations

import uuid

import pytest

from tests.integration.broker_process import BrokerProcess
from tiered_mq.client import (
    Admin,
    ClientError,
    ConsumedRecord,
    Consumer,
    ConsumerConfig,
    DeliverySemantics,
    Producer,
    ProducerConfig,
    RetryingProcessor,
    RetryPolicy,
)
from tiered_mq.client.retry import HDR_ATTEMPT, HDR_ERROR, HDR_ORIGINAL_OFFSET
from tiered_mq.topic_partition import TopicPartition

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(shared_broker: BrokerProcess) -> str:
    return shared_broker.bootstrap


def new_topic(bootstrap: str, prefix: str, *extra_suffixes: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = Admin(bootstrap_servers=bootstrap)
    for suffix in ("", *extra_suffixes):
        admin.create_topic(name + suffix)
    return name


def produce_values(bootstrap: str, topic: str, n: int) -> None:
    with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(n):
            producer.send(topic, f"v{i}".encode(), key=f"k{i}".encode())
    assert producer.delivered == n and producer.failed == 0


def group_consumer(bootstrap: str, group: str, semantics: DeliverySemantics) -> Consumer:
    return Consumer(
        ConsumerConfig(
            bootstrap_servers=bootstrap,
            group_id=group,
            semantics=semantics,
            auto_offset_reset="earliest",
        )
    )


def test_at_least_once_redelivers_unacknowledged(bootstrap: str) -> None:
    topic, group = new_topic(bootstrap, "alo"), f"g-{uuid.uuid4().hex[:8]}"
    produce_values(bootstrap, topic, 10)
    seen: list[bytes | None] = []

    def handler(record: ConsumedRecord) -> None:
        if record.offset == 6:
            raise RuntimeError("crash while processing offset 6")
        seen.append(record.value)

    with group_consumer(bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as c:
        c.subscribe([topic])
        with pytest.raises(RuntimeError):
            c.process(handler, idle_timeout=20)
    assert seen == [f"v{i}".encode() for i in range(6)]

    with group_consumer(bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as c:
        c.subscribe([topic])
        again: list[int] = []
        c.process(lambda r: again.append(r.offset), max_records=4, idle_timeout=20)
    assert again == [6, 7, 8, 9]  # the failed record comes back, nothing before it
    committed = Admin(bootstrap_servers=bootstrap).describe_group(group).offsets
    assert [(p.committed_offset, p.lag) for p in committed] == [(10, 0)]


def test_at_most_once_skips_the_record_that_failed(bootstrap: str) -> None:
    topic, group = new_topic(bootstrap, "amo"), f"g-{uuid.uuid4().hex[:8]}"
    produce_values(bootstrap, topic, 5)
    with group_consumer(bootstrap, group, DeliverySemantics.AT_MOST_ONCE) as c:
        c.subscribe([topic])

        def handler(record: ConsumedRecord) -> None:
            if record.offset == 2:
                raise RuntimeError("lost")

        with pytest.raises(RuntimeError):
            c.process(handler, idle_timeout=20)
    with group_consumer(bootstrap, group, DeliverySemantics.AT_MOST_ONCE) as c:
        c.subscribe([topic])
        rest: list[int] = []
        c.process(lambda r: rest.append(r.offset), idle_timeout=3)
    assert rest == [3, 4]  # offset 2 was committed before it was processed


def test_at_most_once_producer_delivers(bootstrap: str) -> None:
    topic = new_topic(bootstrap, "amop")
    config = ProducerConfig(bootstrap_servers=bootstrap, semantics=DeliverySemantics.AT_MOST_ONCE)
    with Producer(config) as p:
        for i in range(100):
            p.send(topic, str(i).encode())
    assert p.delivered == 100
    with Consumer(ConsumerConfig(bootstrap_servers=bootstrap)) as c:
        c.assign({TopicPartition(topic, 0): 0})
        values = []
        while len(values) < 100:
            batch = c.consume(100, timeout=5)
            assert batch, "timed out"
            values.extend(r.value for r in batch)
    assert values == [str(i).encode() for i in range(100)]


def test_retry_then_dead_letter(bootstrap: str) -> None:
    topic = new_topic(bootstrap, "orders", ".retry", ".dlq")
    with Producer(bootstrap_servers=bootstrap) as p:
        for value in (b"ok-1", b"bad", b"ok-2"):
            p.send(topic, value, key=value, headers=[("trace", b"t-1")])
    handled: list[tuple[str, bytes | None]] = []

    def handler(record: ConsumedRecord) -> None:
        handled.append((record.topic, record.value))
        if record.value == b"bad":
            raise ValueError("unparseable order")

    group = f"g-{uuid.uuid4().hex[:8]}"
    with (
        group_consumer(bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as c,
        Producer(bootstrap_servers=bootstrap) as p,
    ):
        proc = RetryingProcessor(c, p, handler, RetryPolicy(max_attempts=3))
        proc.subscribe([topic])
        stats = proc.run(max_records=5, idle_timeout=20)
    assert (stats.ok, stats.retried, stats.dead_lettered) == (2, 2, 1)
    assert handled.count((topic + ".retry", b"bad")) == 2

    with Consumer(ConsumerConfig(bootstrap_servers=bootstrap)) as dlq:
        dlq.assign({TopicPartition(topic + ".dlq", 0): 0})
        record = None
        for _ in range(20):
            record = dlq.poll(1.0)
            if record is not None:
                break
    assert record is not None
    assert (record.key, record.value) == (b"bad", b"bad")
    assert record.header("trace") == b"t-1"
    assert record.header(HDR_ATTEMPT) == b"3"
    assert record.header(HDR_ERROR) == b"ValueError: unparseable order"
    assert record.header(HDR_ORIGINAL_OFFSET) == b"1"


def test_exactly_once_transactions(bootstrap: str) -> None:
    """Committed transactions are visible to read_committed readers, aborted ones are not."""
    topic = new_topic(bootstrap, "eos")
    config = ProducerConfig(
        bootstrap_servers=bootstrap,
        semantics=DeliverySemantics.EXACTLY_ONCE,
        transactional_id=f"tx-{uuid.uuid4().hex[:8]}",
    )
    producer = Producer(config)
    producer.init_transactions(timeout=15)
    with producer.transaction():
        producer.send(topic, b"committed-1")
        producer.send(topic, b"committed-2")
    with pytest.raises(RuntimeError), producer.transaction():
        producer.send(topic, b"aborted")
        producer.flush()
        raise RuntimeError("abort")
    with producer.transaction():
        producer.send(topic, b"committed-3")

    reader = ConsumerConfig(bootstrap_servers=bootstrap, semantics=DeliverySemantics.EXACTLY_ONCE)
    with Consumer(reader) as c:
        c.assign({TopicPartition(topic, 0): 0})
        values: list[bytes | None] = []
        for _ in range(20):
            values.extend(r.value for r in c.consume(10, timeout=0.5))
            if len(values) >= 3:
                break
    assert values == [b"committed-1", b"committed-2", b"committed-3"]


def test_unknown_topic_is_a_client_error(bootstrap: str) -> None:
    with pytest.raises(ClientError) as info:
        Admin(bootstrap_servers=bootstrap).describe_topic("no-such-topic-here")
    assert info.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
