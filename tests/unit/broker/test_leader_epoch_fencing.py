"""Leader epochs as Kafka's Partition uses them: once the partition state's leader epoch rises
(another tool's leader election, seen through the coordinator), the partition takes it; Fetch
(v9+), ListOffsets (v4+) and OffsetForLeaderEpoch (v2+) check the client's
``current_leader_epoch`` per partition (older: FENCED_LEADER_EPOCH 74, newer:
UNKNOWN_LEADER_EPOCH 75, -1: not checked); and the epoch of the batches (written on append),
Metadata's, ListOffsets' and OffsetForLeaderEpoch's answers agree."""

from __future__ import annotations

from typing import Any

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import PRODUCE, create, part, produce_body
from tiered_mq.broker.broker import Broker
from tiered_mq.coordination.base import PartitionState
from tiered_mq.errors import FencedLeaderEpochError, UnknownLeaderEpochError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.record.records import decode_batches, encode_batch
from tiered_mq.topic_partition import TopicPartition

FENCED, UNKNOWN = FencedLeaderEpochError.errno, UnknownLeaderEpochError.errno
NEW_EPOCH = 2


async def _bump_epoch(broker: Broker, tp: TopicPartition, epoch: int) -> None:
    """What a leader election by another tool does: a new state with a higher leader epoch,
    which the broker applies at its next reconciliation (a ZooKeeper watch runs it)."""
    state = PartitionState(broker.config.node_id, epoch, (broker.config.node_id,), ())
    await broker.coordinator.set_partition_state(tp, state)
    await broker.metadata_changes.reconcile()


async def _produce(client: Client, *batches: list[tuple[bytes, int]]) -> None:
    for records in batches:
        body = encode_batch([(b"k", value, [], ts) for value, ts in records])
        r = await client.call(PRODUCE, 8, produce_body("ep", body))
        assert part(r)["error_code"] == 0


async def _fetch(client: Client, current: int, version: int = 11) -> dict[str, Any]:
    body = fetch_body("ep", 0)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = current
    return part(await client.call(ApiKey.FETCH, version, body), "responses", "partitions")


async def _list_offsets(client: Client, timestamp: int, current: int) -> dict[str, Any]:
    p = {"partition_index": 0, "timestamp": timestamp, "current_leader_epoch": current}
    body = {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "ep", "partitions": [p]}]}
    return part(await client.call(ApiKey.LIST_OFFSETS, 5, body), "topics", "partitions")


async def _end_offset(client: Client, epoch: int, current: int = -1) -> tuple[int, int, int]:
    p = {"partition": 0, "current_leader_epoch": current, "leader_epoch": epoch}
    body = {"replica_id": -1, "topics": [{"topic": "ep", "partitions": [p]}]}
    r = await client.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, body)
    answer = r["topics"][0]["partitions"][0]
    return answer["error_code"], answer["leader_epoch"], answer["end_offset"]


async def _metadata_epoch(client: Client) -> int:
    r = await client.call(ApiKey.METADATA, 8, {"topics": [{"name": "ep"}]})
    return int(r["topics"][0]["partitions"][0]["leader_epoch"])


async def test_requests_are_fenced_by_the_partitions_leader_epoch(
    broker: Broker, client: Client
) -> None:
    await create(client, "ep")
    await _produce(client, [(b"a", 1_000), (b"b", 1_001)], [(b"c", 1_002)])  # 0-2 in epoch 0
    await _bump_epoch(broker, TopicPartition("ep", 0), NEW_EPOCH)
    await _produce(client, [(b"d", 2_000)], [(b"e", 2_001), (b"f", 2_002)])  # 3-5 in the new

    # Fetch: the stale epoch is fenced, a future one unknown; neither reads anything
    for current, expected in ((0, FENCED), (NEW_EPOCH + 1, UNKNOWN)):
        fenced = await _fetch(client, current)
        assert fenced["error_code"] == expected
        assert fenced["high_watermark"] == -1 and not fenced["records"]
    for current, version in ((NEW_EPOCH, 11), (-1, 11), (0, 8)):  # v8 carries no epoch
        fetched = await _fetch(client, current, version)
        assert fetched["error_code"] == 0 and fetched["high_watermark"] == 6
        epochs = [h.partition_leader_epoch for h, _ in decode_batches(bytes(fetched["records"]))]
        assert epochs == [0, 0, NEW_EPOCH, NEW_EPOCH]

    # Metadata and ListOffsets answer the epoch the batches carry
    assert await _metadata_epoch(client) == NEW_EPOCH
    for current, expected in ((0, FENCED), (NEW_EPOCH + 1, UNKNOWN)):
        refused = await _list_offsets(client, -1, current)
        assert (refused["error_code"], refused["offset"], refused["leader_epoch"]) == (
            expected,
            -1,
            -1,
        )
    latest = await _list_offsets(client, -1, NEW_EPOCH)
    assert (latest["error_code"], latest["offset"], latest["leader_epoch"]) == (0, 6, NEW_EPOCH)
    earliest = await _list_offsets(client, -2, -1)
    assert (earliest["offset"], earliest["leader_epoch"]) == (0, 0)
    for timestamp, offset, epoch in ((1_001, 1, 0), (2_001, 4, NEW_EPOCH), (-3, 5, NEW_EPOCH)):
        found = await _list_offsets(client, timestamp, NEW_EPOCH)
        assert (found["offset"], found["leader_epoch"]) == (offset, epoch), timestamp

    # OffsetForLeaderEpoch: fenced the same way; an old epoch ends where the next one starts
    assert await _end_offset(client, 0, current=0) == (FENCED, -1, -1)
    assert await _end_offset(client, 0, current=NEW_EPOCH + 1) == (UNKNOWN, -1, -1)
    assert await _end_offset(client, 0, current=NEW_EPOCH) == (0, 0, 3)
    assert await _end_offset(client, 1) == (0, 0, 3)  # no epoch 1: the one before it
    assert await _end_offset(client, NEW_EPOCH) == (0, NEW_EPOCH, 6)
    assert await _end_offset(client, NEW_EPOCH + 1) == (0, -1, -1)


async def test_a_lower_epoch_in_the_state_is_ignored(broker: Broker, client: Client) -> None:
    await create(client, "ep")
    tp = TopicPartition("ep", 0)
    await _bump_epoch(broker, tp, NEW_EPOCH)
    await _bump_epoch(broker, tp, 1)
    assert broker.replica_manager.partitions[tp].leader_epoch == NEW_EPOCH
    assert (await _fetch(client, NEW_EPOCH))["error_code"] == 0
