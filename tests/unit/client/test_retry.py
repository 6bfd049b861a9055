from __future__ import annotations

import pytest

from tests.unit.client.fakes import FakeMessage, FakeRdConsumer, FakeRdProducer
from tiered_mq.client import consumer as consumer_mod
from tiered_mq.client import producer as producer_mod
from tiered_mq.client.config import ConsumerConfig
from tiered_mq.client.consumer import Consumer
from tiered_mq.client.producer import Producer
from tiered_mq.client.record import ConsumedRecord
from tiered_mq.client.retry import (
    HDR_ATTEMPT,
    HDR_ERROR,
    HDR_ORIGINAL_OFFSET,
    HDR_ORIGINAL_TOPIC,
    Outcome,
    RetryingProcessor,
    RetryPolicy,
)


def rec(
    topic: str, offset: int, headers: tuple[tuple[str, bytes | None], ...] = ()
) -> ConsumedRecord:
    return ConsumedRecord(topic, 0, offset, 0, b"k", b"v", headers)


def test_policy_routes_by_attempt_count() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert policy.destination(rec("orders", 1)) == ("orders.retry", 1)
    assert policy.destination(rec("orders.retry", 1, ((HDR_ATTEMPT, b"1"),))) == ("orders.retry", 2)
    assert policy.destination(rec("orders.retry", 1, ((HDR_ATTEMPT, b"2"),))) == ("orders.dlq", 3)
    assert RetryPolicy(max_attempts=1).destination(rec("orders", 1)) == ("orders.dlq", 1)
    assert policy.attempts_made(rec("o", 1, ((HDR_ATTEMPT, b"junk"),))) == 0
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_failure_headers_keep_user_headers_and_first_origin() -> None:
    policy = RetryPolicy()
    first = policy.failure_headers(rec("orders", 17, (("trace", b"x"),)), 1, KeyError("sku"))
    d = dict(first)
    assert d["trace"] == b"x"
    assert d[HDR_ATTEMPT] == b"1"
    assert d[HDR_ERROR] == b"KeyError: 'sku'"
    assert d[HDR_ORIGINAL_TOPIC] == b"orders"
    assert d[HDR_ORIGINAL_OFFSET] == b"17"
    again = policy.failure_headers(
        ConsumedRecord("orders.retry", 0, 3, 0, None, b"v", first), 2, ValueError("e")
    )
    names = [k for k, _ in again]
    assert names.count(HDR_ATTEMPT) == 1  # replaced, not repeated
    assert dict(again)[HDR_ORIGINAL_OFFSET] == b"17"  # still where it was first read
    assert dict(again)[HDR_ATTEMPT] == b"2"


def test_processor_retries_then_dead_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", FakeRdConsumer)
    monkeypatch.setattr(producer_mod.confluent_kafka, "Producer", FakeRdProducer)
    consumer = Consumer(ConsumerConfig(group_id="g"))
    producer = Producer()
    rd_c, rd_p = consumer._consumer, producer._producer
    assert isinstance(rd_c, FakeRdConsumer) and isinstance(rd_p, FakeRdProducer)

    def handler(record: ConsumedRecord) -> None:
        if record.value == b"bad":
            raise RuntimeError("cannot")

    proc = RetryingProcessor(consumer, producer, handler, RetryPolicy(max_attempts=2))
    proc.subscribe(["orders", "orders.retry"])
    assert rd_c.subscribed == ["orders", "orders.retry"]

    assert proc.handle(rec("orders", 1)) is Outcome.OK
    bad = ConsumedRecord("orders", 0, 2, 0, b"k", b"bad")
    assert proc.handle(bad) is Outcome.RETRY
    assert rd_p.sent[-1]["topic"] == "orders.retry"
    retried = ConsumedRecord("orders.retry", 0, 0, 0, b"k", b"bad", tuple(rd_p.sent[-1]["headers"]))
    assert proc.handle(retried) is Outcome.DEAD_LETTER
    assert rd_p.sent[-1]["topic"] == "orders.dlq"
    assert dict(rd_p.sent[-1]["headers"])[HDR_ATTEMPT] == b"2"
    # every record, failed or not, is acknowledged once handled
    assert [c[1] for c in rd_c.calls] == [
        [("orders", 0, 2)],
        [("orders", 0, 3)],
        [("orders.retry", 0, 1)],
    ]
    assert (proc.stats.ok, proc.stats.retried, proc.stats.dead_lettered) == (1, 1, 1)

    rd_c.queue = [FakeMessage("orders", 0, 9, b"bad"), FakeMessage("orders", 0, 10, b"ok")]
    stats = proc.run(max_records=5, idle_timeout=0.05, poll_timeout=0.01)
    assert stats.total == 5


def test_failed_dlq_produce_leaves_record_unacknowledged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", FakeRdConsumer)
    monkeypatch.setattr(producer_mod.confluent_kafka, "Producer", FakeRdProducer)
    consumer, producer = Consumer(ConsumerConfig(group_id="g")), Producer()
    rd_p = producer._producer
    assert isinstance(rd_p, FakeRdProducer)
    rd_p.failing = {"orders.dlq"}

    def handler(record: ConsumedRecord) -> None:
        raise RuntimeError("x")

    proc = RetryingProcessor(consumer, producer, handler, RetryPolicy(max_attempts=1))
    with pytest.raises(Exception, match="MESSAGE_TOO_LARGE"):
        proc.handle(rec("orders", 4))
    assert isinstance(consumer._consumer, FakeRdConsumer)
    assert consumer._consumer.calls == []
