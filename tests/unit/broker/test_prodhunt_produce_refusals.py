"""Produce refusals in Kafka's order (KafkaApis.handleProduceRequest, then ReplicaManager).

- ``acks`` other than 0, 1, -1 is INVALID_REQUIRED_ACKS only after WRITE on the topic, the
  partition known and ProduceRequest.validateRecords: a missing topic was INVALID_REQUIRED_ACKS
  where Kafka says UNKNOWN_TOPIC_OR_PARTITION, an empty or magic-1 batch likewise where Kafka
  says INVALID_RECORD.
- Transactional batches without a ``transactional_id`` are TRANSACTIONAL_ID_AUTHORIZATION_FAILED
  (Kafka never authorizes a null transactional id); they were INVALID_TXN_STATE.
Nothing is appended in any case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, Client, serving
from tests.unit.broker.test_produce_record_checks import create
from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidRequiredAcksError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnknownTopicOrPartitionError,
    UnsupportedCompressionTypeError,
)
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

PRODUCE = 0
ONE = encode_batch([(b"k", b"v", [], 1_000)])
ZSTD_BEFORE_V7 = UnsupportedCompressionTypeError.errno


def _magic_1() -> bytes:
    out = bytearray(ONE)
    out[16] = 1
    return bytes(out)


async def _produce(
    client: Client,
    topic: str,
    records: bytes,
    *,
    acks: int,
    version: int = 8,
    partition: int = 0,
    transactional_id: str | None = None,
) -> dict[str, Any]:
    body = {
        "transactional_id": transactional_id,
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": records}]}
        ],
    }
    r = await client.call(PRODUCE, version, body)
    return r["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("acks", [2, -2, 1000])
async def test_invalid_acks_comes_after_kafkas_earlier_checks(client: Client, acks: int) -> None:
    await create(client, "t")
    cases = [
        ("t", 0, ONE, 8, InvalidRequiredAcksError.errno),
        ("__consumer_offsets", 0, ONE, 8, InvalidRequiredAcksError.errno),  # acks first
        ("missing", 0, ONE, 8, UnknownTopicOrPartitionError.errno),
        ("t", 9, ONE, 8, UnknownTopicOrPartitionError.errno),
        ("t", 0, b"", 8, InvalidRecordError.errno),
        ("t", 0, b"", 7, CorruptRecordError.errno),
        ("t", 0, _magic_1(), 8, InvalidRecordError.errno),
        ("t", 0, ONE + ONE, 8, InvalidRecordError.errno),
        ("t", 0, encode_batch([(b"k", b"v", [], 1_000)], compression=4), 6, ZSTD_BEFORE_V7),
    ]
    for topic, partition, records, version, code in cases:
        answer = await _produce(
            client, topic, records, acks=acks, version=version, partition=partition
        )
        assert (topic, partition, answer["error_code"]) == (topic, partition, code)
        assert answer["base_offset"] == -1
    assert (await _produce(client, "t", ONE, acks=1))["base_offset"] == 0  # nothing appended


async def test_invalid_acks_on_a_topic_without_write(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **{"authorizer.class.name": STANDARD_AUTHORIZER}) as (
        broker,
        client,
    ):
        for topic in ("open", "closed"):
            await broker.topic_registry.create_topic(topic, 1, {})
        authorizer = broker.authorizer
        assert authorizer is not None
        pattern = ResourcePattern(ResourceType.TOPIC, "open", PatternType.LITERAL)
        write = AclBinding(pattern, ANONYMOUS, "*", AclOperation.WRITE, AclPermissionType.ALLOW)
        assert await authorizer.create([write]) == [None]
        for topic, code in [
            ("open", InvalidRequiredAcksError.errno),
            ("closed", TopicAuthorizationFailedError.errno),
        ]:
            assert (await _produce(client, topic, ONE, acks=2))["error_code"] == code


async def test_transactional_batches_need_a_transactional_id(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **{"transaction.state.log.num.partitions": "1"}) as (
        broker,
        client,
    ):
        await create(client, "t")
        tc = broker.txn_coordinator
        assert tc is not None
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [TopicPartition("t", 0)])
        records = encode_batch(
            [(b"k", b"v", [], 1_000)],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
            is_transactional=True,
        )
        for version in (3, 8):
            answer = await _produce(client, "t", records, acks=-1, version=version)
            assert answer["error_code"] == TransactionalIdAuthorizationFailedError.errno
        partition = broker.replica_manager.get_partition(TopicPartition("t", 0))
        assert partition.log_end_offset == 0  # nothing appended
        answer = await _produce(client, "t", records, acks=-1, transactional_id="tx")
        assert (answer["error_code"], answer["base_offset"]) == (0, 0)
