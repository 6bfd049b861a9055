"""Produce refusals that keep the log intact, and an offset commit that used to fail.

Paths that decode records (a compacted topic, a topic with its own ``compression.type``)
refuse records that could not be written again: INVALID_RECORD (v8+) or CORRUPT_MESSAGE,
never UNKNOWN_SERVER_ERROR, and nothing is appended. Before, a compacted topic took offset
deltas 0, 1, 1 and its log cleaner then failed on every pass."""

from __future__ import annotations

import struct
from typing import Any

import crc32c
import pytest

from tests.unit.broker.conftest import Client
from tests.unit.broker.txn.test_partition_txn import produce as append
from tiered_mq.broker.broker import Broker
from tiered_mq.errors import NotLeaderOrFollowerError
from tiered_mq.record.batch import HEADER
from tiered_mq.record.varint import encode_varint
from tiered_mq.topic_partition import TopicPartition

PRODUCE, OFFSET_COMMIT, OFFSET_FETCH, CREATE_TOPICS = 0, 8, 9, 19
CORRUPT_MESSAGE, INVALID_TOPIC_EXCEPTION, RECORD_LIST_TOO_LARGE, INVALID_RECORD = 2, 17, 18, 87


def record(key: bytes, offset_delta: int) -> bytes:
    body = (
        b"\x00"
        + encode_varint(0)
        + encode_varint(offset_delta)
        + encode_varint(len(key))
        + key
        + encode_varint(1)
        + b"v"
        + b"\x00"
    )
    return encode_varint(len(body)) + body


def batch(records: list[bytes]) -> bytes:
    """An uncompressed batch of ``records`` (count and last offset delta agree), CRC valid."""
    payload = b"".join(records)
    n = len(records)
    header = HEADER.pack(
        0, HEADER.size - 12 + len(payload), -1, 2, 0, 0, n - 1, 0, 0, -1, -1, -1, n
    )
    out = bytearray(header + payload)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


async def produce(client: Client, topic: str, records: bytes, version: int = 8) -> dict[str, Any]:
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    r = await client.call(PRODUCE, version, body)
    return r["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]


async def create(client: Client, name: str, **configs: str) -> None:
    topic = {
        "name": name,
        "num_partitions": 1,
        "replication_factor": 1,
        "configs": [{"name": k, "value": v} for k, v in configs.items()],
    }
    r = await client.call(CREATE_TOPICS, 4, {"topics": [topic], "timeout_ms": 5000})
    assert r["topics"][0]["error_code"] == 0


@pytest.mark.parametrize(
    ("configs", "records"),
    [
        ({"cleanup.policy": "compact"}, [record(b"a", 0), record(b"b", 1), record(b"c", 1)]),
        ({"compression.type": "lz4"}, [record(b"a", 0), record(b"b", 1), record(b"c", 1)]),
        ({"compression.type": "lz4"}, [record(b"a", 0), record(b"b", 2), record(b"c", 1)]),
    ],
)
async def test_records_that_cannot_be_written_again_are_refused(
    client: Client, configs: dict[str, str], records: list[bytes]
) -> None:
    await create(client, "t", **configs)
    bad = batch(records)
    answer = await produce(client, "t", bad)
    assert answer["error_code"] == INVALID_RECORD, answer
    assert (await produce(client, "t", bad, version=7))["error_code"] == CORRUPT_MESSAGE
    good = batch([record(b"a", 0), record(b"b", 1)])
    assert (await produce(client, "t", good))["base_offset"] == 0  # nothing was appended


async def test_a_batch_larger_than_segment_bytes_is_refused_in_its_partition_only(
    client: Client, broker: Broker
) -> None:
    """Kafka's UnifiedLog.append: a batch no segment of ``segment.bytes`` can hold is
    RECORD_LIST_TOO_LARGE and nothing is appended; the request's other partitions go in."""
    topic = {"name": "small", "num_partitions": 2, "replication_factor": 1}
    topic["configs"] = [{"name": "segment.bytes", "value": "2048"}]
    r = await client.call(CREATE_TOPICS, 4, {"topics": [topic], "timeout_ms": 5000})
    assert r["topics"][0]["error_code"] == 0
    big = batch([record(b"k%d" % i + b"x" * 100, i) for i in range(30)])  # > 2048 bytes
    small = batch([record(b"a", 0)])
    assert len(big) > 2048 > len(small)
    parts = [{"index": 0, "records": big}, {"index": 1, "records": small}]
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "small", "partition_data": parts}],
    }
    answers = (await client.call(PRODUCE, 8, body))["responses"][0]["partition_responses"]
    assert [(a["index"], a["error_code"], a["base_offset"]) for a in answers] == [
        (0, RECORD_LIST_TOO_LARGE, -1),
        (1, 0, 0),
    ]
    assert answers[0]["error_message"] == (
        f"Message batch size is {len(big)} bytes in append to partition small-0, which "
        "exceeds the maximum configured segment size of 2048."
    )
    log = broker.replica_manager.local_log(TopicPartition("small", 0))
    assert (log.log_end_offset, log.active_segment.size) == (0, 0)
    assert (await produce(client, "small", small))["base_offset"] == 0


async def test_clients_may_not_write_the_internal_topics(client: Client, broker: Broker) -> None:
    """Kafka's INVALID_TOPIC_EXCEPTION: a forged __consumer_offsets record would otherwise be
    applied as a commit at the next load."""
    await broker.replica_manager.ensure_internal_topic("__consumer_offsets", 1, {})
    answer = await produce(client, "__consumer_offsets", batch([record(b"a", 0)]))
    assert answer["error_code"] == INVALID_TOPIC_EXCEPTION
    assert "internal topic" in answer["error_message"]
    assert (
        broker.replica_manager.local_log(TopicPartition("__consumer_offsets", 0)).log_end_offset
        == 0
    )


async def test_an_append_after_the_topic_was_deleted_is_refused(
    client: Client, broker: Broker
) -> None:
    """A produce that got the partition before a DeleteTopics and its lock after it used to
    write through the closed (possibly reused) file descriptors."""
    await create(client, "doomed")
    partition = broker.replica_manager.get_partition(TopicPartition("doomed", 0))
    await broker.topic_registry.delete_topic("doomed")
    with pytest.raises(NotLeaderOrFollowerError):
        await append(partition, n=1)
    with pytest.raises(NotLeaderOrFollowerError):
        await partition.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)


async def test_an_offset_commit_with_the_longest_retention_is_kept(client: Client) -> None:
    """OffsetCommit v2 retention_time_ms = Long.MAX_VALUE: the expiry saturates (it used to
    overflow int64 and answer COORDINATOR_NOT_AVAILABLE, which clients retry for ever)."""
    await create(client, "t")
    commit = {
        "group_id": "g",
        "generation_id": -1,
        "member_id": "",
        "retention_time_ms": 2**63 - 1,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 5, "committed_metadata": ""}
                ],
            }
        ],
    }
    r = await client.call(OFFSET_COMMIT, 2, commit)
    assert r["topics"][0]["partitions"][0]["error_code"] == 0
    fetched = await client.call(
        OFFSET_FETCH, 1, {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}]}
    )
    assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 5
