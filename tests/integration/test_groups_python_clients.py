"""kafka-python and aiokafka group consumers against a `tiered-mq dev` broker: they find the
coordinator, join, get an assignment, consume, commit, and a later member of the same group
resumes from the committed offsets (checked across clients: each reads what the other wrote)."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioTopicPartition
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KpTopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_groups_confluent import create_topic, produce

pytestmark = pytest.mark.integration

N, PARTS = 90, 3


def kafka_python_consume(
    bootstrap: str, group: str, topic: str, count: int, already: int = 0
) -> list[int]:
    """Consume ``count`` records, commit; the group had ``already`` records committed."""
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    try:
        values: list[int] = []
        deadline = time.monotonic() + 30
        while len(values) < count:
            assert time.monotonic() < deadline, f"kafka-python got {len(values)} of {count}"
            for records in consumer.poll(timeout_ms=200, max_records=count - len(values)).values():
                values += [int(r.value) for r in records]
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTS))
        consumer.commit()  # positions of everything returned so far
        tps = [KpTopicPartition(topic, p) for p in range(PARTS)]
        committed = {tp.partition: consumer.committed(tp) for tp in tps}
        assert sum(o or 0 for o in committed.values()) == already + len(values)
        return values
    finally:
        consumer.close()


async def aiokafka_consume(
    bootstrap: str, group: str, topic: str, count: int, already: int = 0
) -> list[int]:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    await consumer.start()
    try:
        values: list[int] = []
        async with asyncio.timeout(30):
            while len(values) < count:
                batch = await consumer.getmany(timeout_ms=200, max_records=count - len(values))
                for records in batch.values():
                    values += [int(r.value) for r in records]
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTS))
        await consumer.commit()
        committed = [await consumer.committed(AioTopicPartition(topic, p)) for p in range(PARTS)]
        assert sum(o or 0 for o in committed) == already + len(values)
        return values
    finally:
        await consumer.stop()


def test_kafka_python_then_aiokafka_share_a_group(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "shared", PARTS)
    produce(broker.bootstrap, "shared", N, PARTS)
    first = kafka_python_consume(broker.bootstrap, "mixed", "shared", N // 2)
    rest = asyncio.run(
        aiokafka_consume(broker.bootstrap, "mixed", "shared", N - len(first), len(first))
    )
    assert len(set(first)) == len(first) and len(set(rest)) == len(rest)
    assert set(first).isdisjoint(rest)
    assert set(first) | set(rest) == set(range(N))


def test_aiokafka_then_kafka_python_share_a_group(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "shared2", PARTS)
    produce(broker.bootstrap, "shared2", N, PARTS)
    first = asyncio.run(aiokafka_consume(broker.bootstrap, "mixed2", "shared2", N // 3))
    rest = kafka_python_consume(broker.bootstrap, "mixed2", "shared2", N - len(first), len(first))
    assert set(first).isdisjoint(rest)
    assert set(first) | set(rest) == set(range(N))


def test_kafka_python_simple_commit_without_subscription(broker: BrokerProcess) -> None:
    """assign() + commit with generation -1 (no membership), then fetch it back."""
    create_topic(broker.bootstrap, "manual", 1)
    produce(broker.bootstrap, "manual", 10, 1)
    tp = KpTopicPartition("manual", 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="manual-group")
    try:
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(7, "note", -1)})
        assert consumer.committed(tp) == 7
        assert consumer.committed(tp, metadata=True).metadata == "note"
    finally:
        consumer.close()
