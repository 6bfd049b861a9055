"""Producer id expiration (Kafka's ``producer.id.expiration.ms``, KIP-854) on an in-process
broker: an idle producer without an ongoing transaction leaves the partition's producer state
(DescribeProducers, the snapshot, the log cleaner's kept batches); its next batch is that of an
unknown producer (accepted at any sequence, as Kafka since KIP-360); the configs are shown by
DescribeConfigs and ``producer.id.expiration.ms`` changes at runtime."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_dynamic_broker_configs import SET, alter, describe
from tests.unit.broker.test_produce_fetch import PRODUCE, create, part, produce_body
from tests.unit.compaction.helpers import TP, Clock, read_batches
from tests.unit.compaction.test_empty_batches import batch, open_partition, produce
from tests.unit.compaction.test_empty_batches import idempotent as clean_idempotent
from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.broker.producer_state import ProducerStateManager, list_snapshots, snapshot_path
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

DESCRIBE_PRODUCERS = 61
T0 = TopicPartition("t", 0)
# expire after 60 s of idleness, checked every 100 ms (the maintenance loop ticks every second)
SHORT = {
    "producer.id.expiration.ms": "60000",
    "producer.id.expiration.check.interval.ms": "100",
}


def now_ms() -> int:
    return int(time.time() * 1000)


def idempotent(pid: int, seq: int, ts: int, txn: bool = False) -> bytes:
    """One record of producer ``pid`` (epoch 0) at sequence ``seq``, timestamped ``ts``."""
    records = [(b"k", b"v%d" % seq, [], ts)]
    return encode_batch(
        records, producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=txn
    )


async def append(partition: Partition, records: bytes) -> None:
    buf = bytearray(records)
    await partition.append_as_leader(buf, validate_records(buf, 1 << 20))


async def producers(client: Client) -> dict[int, dict[str, Any]]:
    """DescribeProducers of t-0: producer id -> its entry."""
    r = await client.call(
        DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "t", "partition_indexes": [0]}]}
    )
    p = r["topics"][0]["partitions"][0]
    assert p["error_code"] == 0, p
    return {e["producer_id"]: e for e in p["active_producers"]}


async def wait_for(predicate: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def test_idle_producers_expire_and_come_back_as_new_ones(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SHORT) as (broker, client):
        await create(client, "t")
        old = now_ms() - 120_000  # idle for two minutes: past the 60 s expiration
        partition = broker.replica_manager.get_partition(T0)
        for pid in (5, 8):
            await append(partition, idempotent(pid, 0, old))
        await append(partition, idempotent(6, 0, now_ms()))  # recent: kept
        await append(partition, idempotent(7, 0, old, txn=True))  # ongoing transaction: kept

        async def expired() -> bool:
            return set(await producers(client)) == {6, 7}

        await wait_for(expired)
        assert set(partition.last_records_of_active_producers()) == {6, 7}  # cleaner's view
        # producer 5 comes back mid-sequence: an unknown producer, accepted (Kafka since
        # KIP-360); while remembered, sequence 7 after 0 was OUT_OF_ORDER_SEQUENCE_NUMBER
        r = part(await client.call(PRODUCE, 8, produce_body("t", idempotent(5, 7, now_ms()))))
        assert r["error_code"] == 0, r
        assert (await producers(client))[5]["last_sequence"] == 7
        # its retry is a duplicate again: the new state is in force
        again = part(await client.call(PRODUCE, 8, produce_body("t", idempotent(5, 7, now_ms()))))
        assert (again["error_code"], again["base_offset"]) == (0, r["base_offset"])
        # the next snapshot holds the remembered producers only
        async with partition.lock:
            partition.log.roll()
        newest = list_snapshots(partition.log.dir)[-1]
        entries = ProducerStateManager.decode_snapshot(
            snapshot_path(partition.log.dir, newest).read_bytes()
        )
        assert entries is not None and set(entries) == {5, 6, 7}


async def test_expired_producers_are_dropped_when_the_partition_opens(tmp_path: Path) -> None:
    """As Kafka's snapshot load: a restart does not bring back producers idle past the
    expiration (here the restart lowers it below their idleness)."""
    async with serving(tmp_path / "d") as (broker, client):
        await create(client, "t")
        partition = broker.replica_manager.get_partition(T0)
        await append(partition, idempotent(5, 0, now_ms() - 120_000))
        await append(partition, idempotent(6, 0, now_ms()))
        assert set(await producers(client)) == {5, 6}  # the default expiration is a day
    async with serving(tmp_path / "d", **{"producer.id.expiration.ms": "60000"}) as (_, client):
        assert set(await producers(client)) == {6}


async def test_expiration_configs_are_shown_and_the_expiration_is_dynamic(
    tmp_path: Path,
) -> None:
    check = {"producer.id.expiration.check.interval.ms": "100"}
    async with serving(tmp_path / "d", **check) as (broker, client):
        await create(client, "t")
        partition = broker.replica_manager.get_partition(T0)
        await append(partition, idempotent(5, 0, now_ms() - 120_000))
        configs = await describe(client, 4, "0")
        defaults = {
            "producer.id.expiration.ms": "86400000",
            "producer.id.expiration.check.interval.ms": "600000",
            "transactional.id.expiration.ms": "604800000",
            "transaction.remove.expired.transaction.cleanup.interval.ms": "3600000",
        }
        for key, value in defaults.items():
            source = 4 if key in check else 5  # STATIC_BROKER_CONFIG, DEFAULT_CONFIG
            value = check.get(key, value)
            assert (configs[key]["value"], configs[key]["config_source"]) == (value, source), key
        assert not configs["producer.id.expiration.ms"]["read_only"]
        assert configs["producer.id.expiration.check.interval.ms"]["read_only"]

        refused = await alter(client, "0", ("producer.id.expiration.ms", SET, "0"))
        assert refused["error_code"] == 42, refused  # INVALID_REQUEST: at least 1
        await asyncio.sleep(1.5)  # checks ran meanwhile: idle 2 minutes is not a day
        assert set(await producers(client)) == {5}
        r = await alter(client, "0", ("producer.id.expiration.ms", SET, "60000"))
        assert r["error_code"] == 0, r
        entry = (await describe(client, 4, "0"))["producer.id.expiration.ms"]
        assert (entry["value"], entry["config_source"]) == ("60000", 2)  # DYNAMIC_BROKER_CONFIG

        async def expired() -> bool:
            return not await producers(client)

        await wait_for(expired)  # the next check applies the new expiration


async def test_the_cleaner_drops_the_kept_batch_of_an_expired_producer(tmp_path: Path) -> None:
    """A remembered producer's last batch stays in a compacted log (emptied) so that a replay
    still knows it; once the producer expires it goes like any other batch."""
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    for seq in range(5):
        await produce(partition, clean_idempotent(clock, seq))  # producer 9, key k
    clock.now += 60_000
    for i in range(30):
        await produce(partition, batch(clock, [(b"k", f"plain-{i}".encode())]))
    partition.log.roll()
    assert await cleaner.clean_partition(TP, partition) is not None
    assert [h.base_sequence for h, _ in read_batches(partition.log) if h.producer_id == 9] == [4]
    async with partition.lock:  # idle 60 s, expiring at 60 s: expired
        assert partition.remove_expired_producers(clock.now, 60_000) == 1
    await produce(partition, batch(clock, [(b"k", b"last")]))
    partition.log.roll()
    assert await cleaner.clean_partition(TP, partition) is not None
    await cleaner.close()
    assert [h for h, _ in read_batches(partition.log) if h.producer_id == 9] == []
    partition.close()
