"""Fetch answers as Kafka's ReplicaManager/KafkaApis do for what a consumer rarely sends.

- A partition answered with an error (OFFSET_OUT_OF_RANGE included) carries high_watermark,
  last_stable_offset and log_start_offset -1 and null aborted transactions, in every version
  (Kafka's error LogReadResult); it carried the partition's real offsets.
- ``replica_id`` >= 0 is a follower, and this broker has none: NOT_LEADER_OR_FOLLOWER (or
  UNKNOWN_LEADER_EPOCH with a ``current_leader_epoch``), after the authorizer's CLUSTER_ACTION,
  the topic and the epoch checks; it was served as a consumer.
- ``replica_id`` -2 (debugging consumer) reads as a consumer; -3 (future local replica) reads
  to the log end offset whatever ``isolation_level`` (Kafka's LOG_END isolation).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, Client, serving
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.errors import (
    FencedLeaderEpochError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
    UnknownLeaderEpochError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.record.records import decode_batches, encode_batch
from tiered_mq.topic_partition import TopicPartition

TXN = {"transaction.state.log.num.partitions": "1"}


def _fetch(
    parts: list[tuple[str, int]],
    *,
    replica_id: int = -1,
    isolation_level: int = 0,
    epoch: int = -1,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
) -> dict[str, Any]:
    """A Fetch body for ``parts`` (topic, fetch offset), partition 0 of each."""
    return {
        "replica_id": replica_id,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": 1 << 20,
        "isolation_level": isolation_level,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": epoch,
                        "fetch_offset": offset,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
            for topic, offset in parts
        ],
    }


def _parts(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for t in response["responses"] for p in t["partitions"]]


def _values(p: dict[str, Any]) -> list[bytes | None]:
    return [r.value for _, rs in decode_batches(p["records"]) for r in rs]


def _offsets(p: dict[str, Any]) -> tuple[int, int, int]:
    return p["high_watermark"], p["last_stable_offset"], p["log_start_offset"]


@pytest.mark.parametrize("version", [4, 8, 11])
@pytest.mark.parametrize("isolation_level", [0, 1])
async def test_an_out_of_range_partition_answers_offsets_minus_one(
    client: Client, version: int, isolation_level: int
) -> None:
    await create(client, "t")
    await client.call(PRODUCE, 8, produce_body("t", batch([b"a", b"b"])))
    r = await client.call(FETCH, version, _fetch([("t", 9)], isolation_level=isolation_level))
    [bad] = _parts(r)
    assert bad["error_code"] == OffsetOutOfRangeError.errno
    assert _offsets(bad) == (-1, -1, -1) and not bad["records"]
    assert bad["aborted_transactions"] is None


async def test_the_other_partitions_keep_their_offsets(client: Client) -> None:
    for topic in ("ok", "far"):
        await create(client, topic)
        await client.call(PRODUCE, 8, produce_body(topic, batch([b"a", b"b"])))
    r = await client.call(FETCH, 11, _fetch([("ok", 0), ("far", 5)], isolation_level=1))
    ok, far = _parts(r)
    assert (ok["error_code"], _offsets(ok), _values(ok)) == (0, (2, 2, 0), [b"a", b"b"])
    assert ok["aborted_transactions"] == []
    assert (far["error_code"], _offsets(far)) == (OffsetOutOfRangeError.errno, (-1, -1, -1))


async def test_a_fetch_below_the_log_start_answers_offsets_minus_one(client: Client) -> None:
    """After DeleteRecords (the client finds the new start with ListOffsets, as Kafka's)."""
    await create(client, "trim")
    for i in range(4):
        await client.call(PRODUCE, 8, produce_body("trim", batch([f"v{i}".encode()])))
    body = {"topics": [{"name": "trim", "partitions": [{"partition_index": 0, "offset": 2}]}]}
    r = await client.call(21, 1, {**body, "timeout_ms": 1000})
    assert r["topics"][0]["partitions"][0]["low_watermark"] == 2
    [p] = _parts(await client.call(FETCH, 11, _fetch([("trim", 0)])))
    assert (p["error_code"], _offsets(p)) == (OffsetOutOfRangeError.errno, (-1, -1, -1))


@pytest.mark.parametrize("replica_id", [0, 1, 7])
async def test_a_follower_fetch_is_refused_without_records(client: Client, replica_id: int) -> None:
    await create(client, "t")
    await client.call(PRODUCE, 8, produce_body("t", batch([b"a", b"b"])))
    for version in (4, 8):  # no current_leader_epoch before v9
        [p] = _parts(await client.call(FETCH, version, _fetch([("t", 0)], replica_id=replica_id)))
        assert p["error_code"] == NotLeaderOrFollowerError.errno
        assert _offsets(p) == (-1, -1, -1) and not p["records"]
    r = await client.call(FETCH, 11, _fetch([("t", 0), ("gone", 0)], replica_id=replica_id))
    t, gone = _parts(r)
    assert t["error_code"] == NotLeaderOrFollowerError.errno and not t["records"]
    assert gone["error_code"] == UnknownTopicOrPartitionError.errno


async def test_a_follower_fetch_with_an_epoch(client: Client) -> None:
    """Kafka checks the epoch first, then answers an unknown replica with the current epoch
    UNKNOWN_LEADER_EPOCH (so a real follower retries the same tuple)."""
    await create(client, "t")
    await client.call(PRODUCE, 8, produce_body("t", batch([b"a"])))
    for epoch, code in [
        (0, UnknownLeaderEpochError.errno),  # the partition's epoch
        (5, UnknownLeaderEpochError.errno),  # newer than the partition's
        (-1, NotLeaderOrFollowerError.errno),
    ]:
        [p] = _parts(await client.call(FETCH, 11, _fetch([("t", 0)], replica_id=1, epoch=epoch)))
        assert (p["error_code"], _offsets(p), p["records"]) == (code, (-1, -1, -1), b"")


async def test_a_follower_fetch_behind_the_partition_epoch_is_fenced(tmp_path: Path) -> None:
    async with serving(tmp_path / "d") as (broker, client):
        await create(client, "t")
        broker.replica_manager.get_partition(TopicPartition("t", 0)).leader_epoch = 3
        [p] = _parts(await client.call(FETCH, 11, _fetch([("t", 0)], replica_id=1, epoch=2)))
        assert p["error_code"] == FencedLeaderEpochError.errno


async def test_a_follower_fetch_is_answered_at_once(client: Client) -> None:
    await create(client, "t")
    start = time.monotonic()
    body = _fetch([("t", 0)], replica_id=1, max_wait_ms=5000, min_bytes=1 << 20)
    [p] = _parts(await client.call(FETCH, 11, body))
    assert time.monotonic() - start < 2
    assert p["error_code"] == NotLeaderOrFollowerError.errno


async def test_a_follower_fetch_needs_cluster_action(tmp_path: Path) -> None:
    """Kafka's KafkaApis: without CLUSTER_ACTION on the cluster every partition is
    TOPIC_AUTHORIZATION_FAILED (READ on the topic does not do); with it, the replica check."""
    async with serving(tmp_path / "d", **{"authorizer.class.name": STANDARD_AUTHORIZER}) as (
        broker,
        client,
    ):
        await broker.topic_registry.create_topic("t", 1, {})
        authorizer = broker.authorizer
        assert authorizer is not None
        topic = ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL)
        read = AclBinding(topic, ANONYMOUS, "*", AclOperation.READ, AclPermissionType.ALLOW)
        assert await authorizer.create([read]) == [None]
        [p] = _parts(await client.call(FETCH, 11, _fetch([("t", 0)], replica_id=1)))
        assert p["error_code"] == TopicAuthorizationFailedError.errno
        assert _offsets(p) == (-1, -1, -1)
        [p] = _parts(await client.call(FETCH, 11, _fetch([("t", 0)])))  # as a consumer: READ
        assert p["error_code"] == 0
        cluster = ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
        action = AclBinding(
            cluster, ANONYMOUS, "*", AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW
        )
        assert await authorizer.create([action]) == [None]
        [p] = _parts(await client.call(FETCH, 11, _fetch([("t", 0)], replica_id=1)))
        assert p["error_code"] == NotLeaderOrFollowerError.errno


async def _open_transaction(broker: Any, client: Client) -> None:
    """Topic t: a record 'plain' outside any transaction, then 'open' in a transaction left open."""
    await create(client, "t")
    await client.call(PRODUCE, 8, produce_body("t", batch([b"plain"])))
    tc = broker.txn_coordinator
    assert tc is not None
    pid, epoch = await tc.init_producer_id("tx", 60_000)
    await tc.add_partitions("tx", pid, epoch, [TopicPartition("t", 0)])
    records = encode_batch(
        [(b"k", b"open", (), 1000)],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=0,
        is_transactional=True,
    )
    r = await client.call(PRODUCE, 8, {**produce_body("t", records), "transactional_id": "tx"})
    assert r["responses"][0]["partition_responses"][0]["error_code"] == 0


async def test_debugging_and_future_replica_ids(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **TXN) as (broker, client):
        await _open_transaction(broker, client)
        for replica_id in (-1, -2):  # consumers: read_committed stops at the open transaction
            r = await client.call(
                FETCH, 11, _fetch([("t", 0)], replica_id=replica_id, isolation_level=1)
            )
            [p] = _parts(r)
            assert (p["error_code"], _values(p), _offsets(p)) == (0, [b"plain"], (2, 1, 0))
            assert p["aborted_transactions"] == []
        for isolation_level in (0, 1):  # LOG_END: the open transaction too, nothing listed
            r = await client.call(
                FETCH, 11, _fetch([("t", 0)], replica_id=-3, isolation_level=isolation_level)
            )
            [p] = _parts(r)
            assert (p["error_code"], _values(p)) == (0, [b"plain", b"open"])
            assert _offsets(p) == (2, 1, 0) and p["aborted_transactions"] is None
