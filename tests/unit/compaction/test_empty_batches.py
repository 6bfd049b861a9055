"""Batches that compaction empties (Kafka's LogCleaner.checkBatchRetention): dropped, unless
they are what an active producer's state was last built from (RETAIN_EMPTY) or end their
group; a log whose keys are overwritten again and again reaches a steady size."""

from __future__ import annotations

from pathlib import Path

from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.broker.producer_state import ProducerStateManager
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.records import Record, encode_batch

from .helpers import TP, Clock, read_batches

DAY_MS = 24 * 3600 * 1000
PROPS = {"cleanup.policy": "compact", "segment.bytes": "600", "file.delete.delay.ms": "0"}


def open_partition(path: Path) -> Partition:
    return Partition.open(TP, path, LogConfig.from_properties(PROPS))


def batch(clock: Clock, records: list[tuple[bytes, bytes]], **fields: int) -> bytearray:
    return bytearray(encode_batch([(k, v, [], clock.now) for k, v in records], **fields))  # type: ignore[arg-type]


async def produce(partition: Partition, buf: bytearray) -> tuple[int, bool]:
    result = await partition.append_as_leader(buf, validate_records(buf, 1 << 20))
    return result.base_offset, result.duplicate


def idempotent(clock: Clock, seq: int, value: bytes = b"idem") -> bytearray:
    return batch(clock, [(b"k", value)], producer_id=9, producer_epoch=1, base_sequence=seq)


def sealed(partition: Partition) -> list[tuple[BatchHeader, list[Record]]]:
    """The batches below the active segment (what the cleaner rewrites)."""
    active = partition.log.active_segment.base_offset
    return [(h, r) for h, r in read_batches(partition.log) if h.base_offset < active]


def sealed_bytes(partition: Partition) -> int:
    return sum(s.size for s in partition.log.segments()[:-1])


async def test_overwritten_keys_reach_a_steady_size(tmp_path: Path) -> None:
    # Each 600-byte segment is a group of its own when it is dirty: its last batch is kept
    # (empty) to end the group. The old code copied such empty batches unchanged ("all of
    # their 0 records kept") in every later pass: 10 keys overwritten 20 times left 10 more
    # empty batches per round, for ever.
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    figures = []
    for round_ in range(6):
        for i in range(200):
            value = f"r{round_}-{i:03d}".encode()
            await produce(partition, batch(clock, [(f"key-{i % 10}".encode(), value)]))
            clock.now += 1
        partition.log.roll()
        assert await cleaner.clean_partition(TP, partition) is not None
        batches = sealed(partition)
        empty = sum(1 for h, _ in batches if h.records_count == 0)
        assert empty <= len(partition.log.segments()) - 1  # at most one per group
        figures.append((sealed_bytes(partition), len(batches), empty))
        latest = {r.key: r.value for _, records in batches for r in records}
        assert latest == {f"key-{k}".encode(): f"r{round_}-{190 + k}".encode() for k in range(10)}
    await cleaner.close()
    assert figures[2] == figures[3] == figures[4] == figures[5], figures
    partition.close()


async def test_the_last_batch_of_an_active_producer_is_kept_empty(tmp_path: Path) -> None:
    """Producer 9's records are all superseded; its last batch stays (empty, its sequence
    range and offsets as appended) through every pass, and only that one: a log replayed
    without any snapshot still answers its retry as a duplicate."""
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    offsets = [(await produce(partition, idempotent(clock, seq)))[0] for seq in range(5)]
    for round_ in range(4):
        for i in range(30):
            await produce(partition, batch(clock, [(b"k", f"plain-{round_}-{i}".encode())]))
        partition.log.roll()
        assert await cleaner.clean_partition(TP, partition) is not None
        mine = [h for h, _ in read_batches(partition.log) if h.producer_id == 9]
        assert [(h.base_offset, h.base_sequence, h.records_count) for h in mine] == [
            (offsets[-1], 4, 0)
        ]
    await cleaner.close()
    # the producer state as a replay of the cleaned log rebuilds it
    state = ProducerStateManager(tmp_path / "scratch")
    state.replay(h for h, _ in read_batches(partition.log))
    retry = idempotent(clock, 4)
    dup = state.check(validate_records(retry, 1 << 20)[0][1])
    assert dup is not None and dup.first_offset == offsets[-1]
    # and so does a restart that finds no snapshot
    partition.close()
    for snapshot in (tmp_path / "t-0").glob("*.snapshot"):
        snapshot.unlink()
    partition = open_partition(tmp_path / "t-0")
    assert await produce(partition, idempotent(clock, 4)) == (offsets[-1], True)
    next_offset, duplicate = await produce(partition, idempotent(clock, 5))
    assert not duplicate and next_offset == partition.log.log_end_offset - 1
    partition.close()


async def test_an_inactive_producers_batches_go(tmp_path: Path) -> None:
    """Once the partition no longer knows producer 9 (as after Kafka's producer id expiration)
    its emptied batches are dropped like any other; the old code kept its last one for ever."""
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    for seq in range(5):
        await produce(partition, idempotent(clock, seq))
    del partition.producer_state.producers[9]
    for i in range(30):
        await produce(partition, batch(clock, [(b"k", f"plain-{i}".encode())]))
    partition.log.roll()
    assert await cleaner.clean_partition(TP, partition) is not None
    await cleaner.close()
    batches = read_batches(partition.log)
    assert [h for h, _ in batches if h.producer_id == 9] == []
    assert [r.value for _, records in batches for r in records] == [b"plain-29"]
    partition.close()


async def test_a_producer_whose_last_entry_is_a_marker_keeps_that_marker(tmp_path: Path) -> None:
    """Producer 5 commits a transaction at epoch 0, then the coordinator bumps it to epoch 1
    with an ABORT marker (no data since): its data and the COMMIT marker go (after the
    horizon), the epoch-1 marker stays, so a replay still fences epoch 0."""
    clock = Clock()
    # segments roll by size and by hand only: the markers carry wall-clock time, the records
    # the test clock's, and segment.ms counts record time (Kafka's timeWaitedForRoll)
    config = LogConfig.from_properties({**PROPS, "segment.ms": str(10**15)})
    partition = Partition.open(TP, tmp_path / "t-0", config)
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    fields = {"producer_id": 5, "producer_epoch": 0, "base_sequence": 0, "is_transactional": 1}
    await produce(partition, batch(clock, [(b"k", b"txn")], **fields))
    await partition.append_txn_marker(5, 0, True, 0)
    fencing = await partition.append_txn_marker(5, 1, False, 0)
    for round_ in range(3):
        for i in range(30):
            await produce(partition, batch(clock, [(b"k", f"plain-{round_}-{i}".encode())]))
        partition.log.roll()
        assert await cleaner.clean_partition(TP, partition) is not None
        clock.now += DAY_MS + 1  # past delete.retention.ms: empty markers may go
    await cleaner.close()
    mine = [h for h, _ in read_batches(partition.log) if h.producer_id == 5]
    assert [(h.base_offset, h.is_control, h.producer_epoch) for h in mine] == [(fencing, True, 1)]
    state = ProducerStateManager(tmp_path / "scratch")
    state.replay(h for h, _ in read_batches(partition.log))
    assert state.producers[5].epoch == 1
    partition.close()
