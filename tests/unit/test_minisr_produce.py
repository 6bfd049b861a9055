"""Three Produce answers made Kafka's, through an in-process broker and raw Produce requests:

- ``min.insync.replicas`` capped at the replica count (Kafka 3.7+'s Partition.effectiveMinIsr,
  KAFKA-15583): a one-replica topic asking for 2 takes acks=all and is not under min ISR; a
  partition of replicas [0, 1] with ISR [0] still answers NOT_ENOUGH_REPLICAS (19) and is.
- A CRC-valid batch whose record count or last offset delta is negative is INVALID_RECORD (87)
  at Produce v8+, as LogValidator.validateBatch refuses it, CORRUPT_MESSAGE (2) before; a bad
  CRC stays CORRUPT_MESSAGE.
- A record stamped below -1 in a batch whose max timestamp is -1 is judged against
  ``message.timestamp.before.max.ms`` (INVALID_TIMESTAMP, 32), as LogValidator judges every
  timestamp but -1.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import crc32c

from tests.unit.broker.conftest import Client, serving
from tiered_mq.record.batch import CRC_START
from tiered_mq.record.records import encode_batch

PRODUCE, CREATE_TOPICS = 0, 19
NOT_ENOUGH_REPLICAS, INVALID_RECORD, CORRUPT_MESSAGE, INVALID_TIMESTAMP = 19, 87, 2, 32
LAST_OFFSET_DELTA_AT, RECORDS_COUNT_AT, CRC_AT = 23, 57, 17  # v2 batch header


async def create(client: Client, topic: str, **configs: str) -> None:
    topics = [
        {
            "name": topic,
            "num_partitions": 1,
            "replication_factor": 1,
            "configs": [{"name": k, "value": v} for k, v in configs.items()],
        }
    ]
    r = await client.call(CREATE_TOPICS, 4, {"topics": topics, "timeout_ms": 5000})
    assert r["topics"][0]["error_code"] == 0


async def produce(
    client: Client, topic: str, records: bytes, acks: int = -1, version: int = 8
) -> dict[str, Any]:
    body = {
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    r = await client.call(PRODUCE, version, body)
    return r["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]


def one(timestamp: int = 1_000) -> bytes:
    return encode_batch([(b"k", b"v", [], timestamp)])


def with_counts(records_count: int, last_offset_delta: int, crc_ok: bool = True) -> bytes:
    """A one-record batch with its header's record count and last offset delta replaced, CRC
    recomputed (``crc_ok``) or left stale."""
    buf = bytearray(one())
    struct.pack_into(">i", buf, RECORDS_COUNT_AT, records_count)
    struct.pack_into(">i", buf, LAST_OFFSET_DELTA_AT, last_offset_delta)
    if crc_ok:
        struct.pack_into(">I", buf, CRC_AT, crc32c.crc32c(bytes(buf[CRC_START:])))
    return bytes(buf)


async def test_one_replica_takes_acks_all_with_min_insync_replicas_2(tmp_path: Path) -> None:
    async with serving(tmp_path / "data") as (broker, client):
        await create(client, "one", **{"min.insync.replicas": "2"})
        p = await produce(client, "one", one())
        assert (p["error_code"], p["base_offset"]) == (0, 0)
        assert broker.metrics.registry.get_sample_value("tiered_mq_under_min_isr_partitions") == 0


async def test_a_replica_out_of_the_isr_refuses_acks_all(tmp_path: Path) -> None:
    """The partition's state says replicas [0, 1], ISR [0] (what a broker restarted on a data
    directory of a two-broker cluster reads; with ZooKeeper and a real client:
    tests/integration/test_minisr_effective.py)."""
    data = tmp_path / "data"
    async with serving(data) as (_, client):
        await create(client, "two", **{"min.insync.replicas": "2"})
    cluster = data / "cluster.json"
    state = json.loads(cluster.read_text())
    state["partitions"]["two-0"] = {"leader": 0, "leader_epoch": 0, "isr": [0], "replicas": [0, 1]}
    cluster.write_text(json.dumps(state))
    async with serving(data) as (broker, client):
        assert (await produce(client, "two", one()))["error_code"] == NOT_ENOUGH_REPLICAS
        assert (await produce(client, "two", one(), acks=1))["error_code"] == 0
        assert broker.metrics.registry.get_sample_value("tiered_mq_under_min_isr_partitions") == 1


async def test_negative_counts_in_a_crc_valid_batch_are_invalid_record(tmp_path: Path) -> None:
    async with serving(tmp_path / "data") as (_, client):
        await create(client, "t")
        for count, delta in ((-1, 0), (1, -1), (-1, -2), (0, -1)):
            batch = with_counts(count, delta)
            p = await produce(client, "t", batch)
            assert p["error_code"] == INVALID_RECORD, (count, delta, p)
            assert p["error_message"], p
            p = await produce(client, "t", batch, version=7)  # no INVALID_RECORD before v8
            assert p["error_code"] == CORRUPT_MESSAGE, (count, delta, p)
        p = await produce(client, "t", with_counts(-1, 0, crc_ok=False))
        assert p["error_code"] == CORRUPT_MESSAGE
        p = await produce(client, "t", one())
        assert (p["error_code"], p["base_offset"]) == (0, 0)  # nothing was appended before


async def test_a_timestamp_below_minus_1_is_judged_by_before_max_ms(tmp_path: Path) -> None:
    async with serving(tmp_path / "data") as (_, client):
        await create(client, "window", **{"message.timestamp.before.max.ms": "3600000"})
        await create(client, "default")
        p = await produce(client, "window", one(-5))
        assert p["error_code"] == INVALID_TIMESTAMP, p
        assert [e["batch_index"] for e in p["record_errors"]] == [0]
        assert "Timestamp -5 of message" in p["record_errors"][0]["batch_index_error_message"]
        p = await produce(client, "window", one(-1))  # no timestamp: nothing to judge (Kafka)
        assert (p["error_code"], p["base_offset"]) == (0, 0)
        # the default before.max.ms (Long.MAX_VALUE) refuses nothing, as Kafka's
        assert (await produce(client, "default", one(-5)))["error_code"] == 0
