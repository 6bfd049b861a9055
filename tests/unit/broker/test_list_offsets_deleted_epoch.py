"""ListOffsets -3 (max timestamp) answering a record DeleteRecords left below the log start
offset in a local segment still held answers the leader epoch its batch was written in, as
Kafka's MAX_TIMESTAMP lookup answers the batch's ``partitionLeaderEpoch``: not the partition's
current epoch (which it answered, so after a leader election it named an epoch the record was
not written in)."""

from __future__ import annotations

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_leader_epoch_fencing import (
    NEW_EPOCH,
    _bump_epoch,
    _list_offsets,
    _produce,
)
from tests.unit.broker.test_produce_fetch import create
from tiered_mq.broker.broker import Broker
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition


async def _delete_records(client: Client, before: int) -> int:
    body = {
        "topics": [{"name": "ep", "partitions": [{"partition_index": 0, "offset": before}]}],
        "timeout_ms": 5000,
    }
    answer = (await client.call(ApiKey.DELETE_RECORDS, 1, body))["topics"][0]["partitions"][0]
    assert answer["error_code"] == 0
    return int(answer["low_watermark"])


async def test_max_timestamp_below_the_log_start_answers_its_batchs_epoch(
    broker: Broker, client: Client
) -> None:
    await create(client, "ep")
    await _produce(client, [(b"a", 1_000), (b"b", 9_000)])  # 0-1 in epoch 0; 1 has the max
    await _bump_epoch(broker, TopicPartition("ep", 0), NEW_EPOCH)
    await _produce(client, [(b"c", 2_000)], [(b"d", 3_000), (b"e", 4_000)])  # 2-4 in the new
    assert await _delete_records(client, 3) == 3  # into the one local segment
    assert len(broker.replica_manager.partitions[TopicPartition("ep", 0)].log.segments()) == 1

    found = await _list_offsets(client, -3, NEW_EPOCH)
    assert (found["error_code"], found["timestamp"], found["offset"]) == (0, 9_000, 1)
    assert found["leader_epoch"] == 0  # the epoch batch 0-1 was written in
    # the rest still answer as before: the log start's batch and the log end's epoch
    earliest = await _list_offsets(client, -2, NEW_EPOCH)
    assert (earliest["offset"], earliest["leader_epoch"]) == (3, NEW_EPOCH)
    latest = await _list_offsets(client, -1, NEW_EPOCH)
    assert (latest["offset"], latest["leader_epoch"]) == (5, NEW_EPOCH)
    by_time = await _list_offsets(client, 1_000, NEW_EPOCH)  # below the start: not found
    assert (by_time["offset"], by_time["timestamp"]) == (3, 3_000)
    assert by_time["leader_epoch"] == NEW_EPOCH
