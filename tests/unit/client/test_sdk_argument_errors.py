"""SDK calls given arguments they cannot use: the caller learns it at once, as a typed error,
not as a different answer or a raw confluent-kafka exception (real librdkafka handles, no
broker: each is refused before any request)."""

from __future__ import annotations

from typing import Any

import pytest

from tiered_mq.client import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_STORED,
    Admin,
    AdminConfig,
    ClientError,
    Consumer,
    ConsumerConfig,
    Producer,
    ProducerConfig,
)
from tiered_mq.topic_partition import TopicPartition

DEAD = "127.0.0.1:1"
TP = TopicPartition("t", 0)


@pytest.mark.parametrize("spec", ["earliset", "LATEST", "", "beginning"])
def test_list_offsets_refuses_a_spec_it_does_not_know(spec: str) -> None:
    """A mistyped ``"earliset"`` was answered with the latest offsets."""
    admin = Admin(AdminConfig(bootstrap_servers=DEAD, request_timeout_s=1))
    with pytest.raises(ValueError, match=f"offset spec {spec!r}"):
        admin.list_offsets([TP], spec)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        admin.list_offsets([], spec)  # wrong whatever the partitions


@pytest.mark.parametrize("offset", [-5, -3, -1001])
def test_assign_refuses_a_negative_offset_as_a_client_error(offset: int) -> None:
    """``assign({tp: -5})`` raised confluent-kafka's KafkaException, which ``except
    ClientError`` does not catch."""
    with Consumer(ConsumerConfig(bootstrap_servers=DEAD)) as consumer:
        with pytest.raises(ClientError) as raised:
            consumer.assign({TP: offset})
        assert raised.value.name == "_INVALID_ARG"
        assert f"invalid start offset {offset}" in str(raised.value)
        assert consumer.assignment() == []


def test_assign_takes_the_logical_offsets() -> None:
    with Consumer(ConsumerConfig(bootstrap_servers=DEAD)) as consumer:
        logical = [OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED, 0, 7]
        consumer.assign({TopicPartition("t", p): o for p, o in enumerate(logical)})
        assert len(consumer.assignment()) == len(logical)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda: Producer(ProducerConfig(bootstrap_servers=DEAD, extra={"no.such": 1})),
            'producer config: No such configuration property: "no.such"',
        ),
        (
            lambda: Consumer(ConsumerConfig(bootstrap_servers=DEAD, session_timeout_ms=-5)),
            'consumer config: Configuration property "session.timeout.ms" value -5 is outside'
            " allowed range 1..3600000",
        ),
        (
            lambda: Admin(AdminConfig(bootstrap_servers=DEAD, extra={"acks": "two"})),
            "admin config: Invalid value",
        ),
    ],
)
def test_a_property_librdkafka_refuses_is_a_client_error(make: Any, said: str) -> None:
    """The constructors let confluent-kafka's KafkaException out (and its message kept
    librdkafka's trailing newline, an empty line under the CLI's error)."""
    with pytest.raises(ClientError) as raised:
        make()
    assert raised.value.name == "_INVALID_ARG"
    assert said in str(raised.value)
    assert str(raised.value) == str(raised.value).strip()


def test_auto_offset_reset_takes_kafkas_none() -> None:
    """Kafka's ``auto.offset.reset=none`` is librdkafka's ``error``; librdkafka refused "none"."""
    config = ConsumerConfig(bootstrap_servers=DEAD, group_id="g", auto_offset_reset="none")
    assert config.to_librdkafka()["auto.offset.reset"] == "error"
    Consumer(config).close()
