"""Commit discipline of each semantics and delivery-error reporting, with librdkafka faked."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest

from tests.unit.client.fakes import FakeMessage, FakeRdConsumer, FakeRdProducer
from tiered_mq.client import consumer as consumer_mod
from tiered_mq.client import producer as producer_mod
from tiered_mq.client.config import ConsumerConfig, ProducerConfig
from tiered_mq.client.consumer import Consumer
from tiered_mq.client.errors import ClientError, DeliveryError, TransactionsUnsupportedError
from tiered_mq.client.producer import Producer


@pytest.fixture
def fake_rd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", FakeRdConsumer)
    monkeypatch.setattr(producer_mod.confluent_kafka, "Producer", FakeRdProducer)


def _consumer(semantics: str, group: str | None = "g") -> tuple[Consumer, FakeRdConsumer]:
    c = Consumer(ConsumerConfig(group_id=group, semantics=semantics))  # type: ignore[arg-type]
    rd = c._consumer
    assert isinstance(rd, FakeRdConsumer)
    rd.queue = [
        FakeMessage("t", 0, 5, b"a"),
        FakeMessage("t", 1, 9, b"b"),
        FakeMessage("t", 0, 6, b"c"),
    ]
    return c, rd


@pytest.mark.usefixtures("fake_rd")
def test_at_most_once_commits_before_handing_out() -> None:
    c, rd = _consumer("at-most-once")
    record = c.poll()
    assert record is not None and record.offset == 5
    assert rd.calls == [("commit", [("t", 0, 6)])]
    batch = c.consume(10)
    assert [r.value for r in batch] == [b"b", b"c"]
    assert rd.calls[-1] == ("commit", [("t", 1, 10), ("t", 0, 7)])
    c.ack(*batch)  # no-op: already committed
    assert len(rd.calls) == 2


@pytest.mark.usefixtures("fake_rd")
def test_at_least_once_stores_only_acknowledged() -> None:
    c, rd = _consumer("at-least-once")
    batch = c.consume(10)
    assert rd.calls == []  # nothing committed or stored before processing
    c.ack(batch[0])
    assert rd.calls == [("store", [("t", 0, 6)])]
    c.close()
    assert rd.calls[-1] == ("commit", None)  # close commits what is stored
    assert rd.closed


@pytest.mark.usefixtures("fake_rd")
def test_process_does_not_ack_a_failed_record() -> None:
    c, rd = _consumer("at-least-once")

    def handler(record: Any) -> None:
        if record.value == b"b":
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        c.process(handler, max_records=3)
    assert rd.calls == [("store", [("t", 0, 6)])]


@pytest.mark.usefixtures("fake_rd")
def test_groupless_and_exactly_once_commit_nothing() -> None:
    for semantics, group in (
        ("at-least-once", None),
        ("exactly-once", "g"),
        ("at-most-once", None),
    ):
        c, rd = _consumer(semantics, group)
        c.ack(*c.consume(10))
        c.close()
        assert rd.calls == []
    c, _ = _consumer("at-least-once", None)
    with pytest.raises(ClientError, match="group_id"):
        c.subscribe(["t"])


@pytest.mark.usefixtures("fake_rd")
def test_in_band_errors_raise_and_eof_is_skipped() -> None:
    c, rd = _consumer("at-least-once")
    eof = confluent_kafka.KafkaError(confluent_kafka.KafkaError._PARTITION_EOF)
    bad = confluent_kafka.KafkaError(confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED, "no")
    rd.queue = [FakeMessage("t", 0, 1, None, error=eof), FakeMessage("t", 0, 1, None, error=bad)]
    assert c.poll() is None
    with pytest.raises(ClientError) as info:
        c.poll()
    assert info.value.name == "TOPIC_AUTHORIZATION_FAILED"


@pytest.mark.usefixtures("fake_rd")
def test_producer_counts_and_raises_failures_on_flush() -> None:
    p = Producer(ProducerConfig())
    rd = p._producer
    assert isinstance(rd, FakeRdProducer)
    rd.failing = {"bad"}
    seen: list[tuple[str | None, str]] = []
    p.send("ok", b"1", on_delivery=lambda e, t, _p, _o: seen.append((e and e.name, t)))
    p.send("bad", b"2", key="k", headers=[("h", b"v")], partition=3, timestamp_ms=7)
    with pytest.raises(DeliveryError) as info:
        p.flush()
    assert info.value.name == "MESSAGE_TOO_LARGE"
    assert info.value.failures[0][0] == "bad"
    assert (p.delivered, p.failed) == (1, 1)
    assert seen == [(None, "ok")]  # only the first send asked for a callback
    assert rd.sent[1]["headers"] == [("h", b"v")] and rd.sent[1]["timestamp"] == 7
    p.flush()  # failures are reported once


@pytest.mark.usefixtures("fake_rd")
def test_a_long_run_of_sends_serves_delivery_reports_without_an_explicit_poll() -> None:
    p = Producer(ProducerConfig())
    rd = p._producer
    assert isinstance(rd, FakeRdProducer)
    rd.failing = {"bad"}
    for _ in range(producer_mod.POLL_EVERY):
        p.send("bad", b"x")
    assert p.failed == producer_mod.POLL_EVERY  # reports did not pile up until flush
    assert not rd.pending
    with pytest.raises(DeliveryError):
        p.flush()


@pytest.mark.usefixtures("fake_rd")
def test_transactions_need_exactly_once() -> None:
    with pytest.raises(ClientError, match="exactly-once"), Producer().transaction():
        pass


def test_init_transactions_failure_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoTxnProducer(FakeRdProducer):
        def init_transactions(self, timeout: float) -> None:
            raise confluent_kafka.KafkaException(
                confluent_kafka.KafkaError(confluent_kafka.KafkaError._TIMED_OUT, "timed out")
            )

    monkeypatch.setattr(producer_mod.confluent_kafka, "Producer", NoTxnProducer)
    p = Producer(ProducerConfig(semantics="exactly-once", transactional_id="tx"))  # type: ignore[arg-type]
    with pytest.raises(TransactionsUnsupportedError, match="transactional producer"):
        p.init_transactions()
