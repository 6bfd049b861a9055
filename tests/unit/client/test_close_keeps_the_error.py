"""A failure while cleaning up (closing a consumer, aborting a transaction) does not replace
the error that made the block end, and is never a raw confluent-kafka exception (librdkafka
faked: its commit and abort fail as they do with the broker gone)."""

from __future__ import annotations

import confluent_kafka
import pytest

from tests.unit.client.fakes import FakeRdConsumer, FakeRdProducer
from tiered_mq.client import consumer as consumer_mod
from tiered_mq.client import producer as producer_mod
from tiered_mq.client.config import ConsumerConfig, ProducerConfig
from tiered_mq.client.consumer import Consumer
from tiered_mq.client.errors import ClientError
from tiered_mq.client.producer import Producer


def broker_gone() -> confluent_kafka.KafkaException:
    return confluent_kafka.KafkaException(
        confluent_kafka.KafkaError(confluent_kafka.KafkaError._WAIT_COORD, "Commit failed")
    )


class CommitFails(FakeRdConsumer):
    def commit(self, offsets: object = None, asynchronous: bool = True) -> None:
        raise broker_gone()


class TransactionsFail(FakeRdProducer):
    def init_transactions(self, timeout: float) -> None:
        pass

    def begin_transaction(self) -> None:
        pass

    def commit_transaction(self, timeout: float) -> None:
        raise confluent_kafka.KafkaException(
            confluent_kafka.KafkaError(confluent_kafka.KafkaError._FENCED, "fenced")
        )

    def abort_transaction(self, timeout: float) -> None:
        raise broker_gone()


@pytest.fixture(autouse=True)
def failing_rd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", CommitFails)
    monkeypatch.setattr(producer_mod.confluent_kafka, "Producer", TransactionsFail)


def test_the_handlers_error_survives_a_failed_close() -> None:
    """The handler's RuntimeError was replaced by the close's ClientError, so ``except
    RuntimeError`` around the ``with`` missed it."""
    consumer = Consumer(ConsumerConfig(group_id="g"))
    with pytest.raises(RuntimeError, match="handler failed") as raised, consumer:
        raise RuntimeError("handler failed")
    notes = getattr(raised.value, "__notes__", [])
    assert notes == ["then closing the consumer failed: _WAIT_COORD: Commit failed"]
    assert isinstance(consumer._consumer, FakeRdConsumer) and consumer._consumer.closed


def test_a_failed_close_without_an_error_is_raised() -> None:
    with pytest.raises(ClientError, match="_WAIT_COORD"), Consumer(ConsumerConfig(group_id="g")):
        pass


def transactional() -> Producer:
    return Producer(ProducerConfig(semantics="exactly-once", transactional_id="tx"))  # type: ignore[arg-type]


def test_the_bodys_error_survives_a_failed_abort() -> None:
    """A failed abort raised confluent-kafka's KafkaException in place of the body's error."""
    with pytest.raises(ValueError, match="bad record") as raised, transactional().transaction():
        raise ValueError("bad record")
    notes = getattr(raised.value, "__notes__", [])
    assert notes == [
        "then aborting the transaction failed: _WAIT_COORD: abort transaction: Commit failed"
    ]


def test_a_failed_commit_is_raised_typed_even_when_the_abort_fails() -> None:
    """The commit's error is the one raised, as ClientError; the abort's is a note on it (a
    raw KafkaException from the abort came out before)."""
    with pytest.raises(ClientError) as raised, transactional().transaction():
        pass
    assert raised.value.name == "_FENCED"
    assert "commit transaction" in str(raised.value)
    assert getattr(raised.value, "__notes__", []) == [
        "then aborting the transaction failed: _WAIT_COORD: abort transaction: Commit failed"
    ]
