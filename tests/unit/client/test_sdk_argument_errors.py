"""SDK calls given arguments they cannot use: the caller learns it at once, as a typed error,
not as a different answer or a raw confluent-kafka exception (real librdkafka handles, no
broker: each is refused before any request)."""

from __future__ import annotations

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
