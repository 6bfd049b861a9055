"""Producer snapshots of a compacted partition stay bounded by its segments (Kafka's
deleteProducerSnapshots after replaceSegments, removeStraySnapshots on open), and the newest,
recovery's starting point, is never deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker import producer_state
from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.broker.producer_state import ProducerStateManager, list_snapshots
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch

from .helpers import TP, Clock

PROPS = {"cleanup.policy": "compact", "segment.bytes": "600", "file.delete.delay.ms": "0"}


def open_partition(path: Path) -> Partition:
    return Partition.open(TP, path, LogConfig.from_properties(PROPS))


def idempotent(clock: Clock, seq: int) -> bytearray:
    records = [(f"key-{seq % 10}".encode(), f"value-{seq:05d}".encode(), [], clock.now)]
    return bytearray(encode_batch(records, producer_id=9, producer_epoch=1, base_sequence=seq))  # type: ignore[arg-type]


async def produce(partition: Partition, buf: bytearray) -> tuple[int, bool]:
    result = await partition.append_as_leader(buf, validate_records(buf, 1 << 20))
    return result.base_offset, result.duplicate


def bases(partition: Partition) -> set[int]:
    return {s.base_offset for s in partition.log.segments()}


async def test_cleaning_deletes_the_snapshots_of_replaced_segments(tmp_path: Path) -> None:
    # The old code deleted snapshots only below the local log start offset, which never
    # moves on a compacted topic: one more snapshot per roll, for ever (160 after 8 rounds).
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    seq = 0
    for _ in range(8):
        for _ in range(200):
            await produce(partition, idempotent(clock, seq))
            seq += 1
        assert await cleaner.clean_partition(TP, partition) is not None
        snapshots = list_snapshots(tmp_path / "t-0")
        assert len(snapshots) <= len(partition.log.segments()), snapshots
        assert set(snapshots) <= bases(partition), snapshots  # no stray one
        assert snapshots[-1] == partition.log.active_segment.base_offset
    await cleaner.close()
    # recovery starts from the newest snapshot: the producer's retry is still a duplicate
    last_offset = partition.log.log_end_offset - 1
    partition.close()
    partition = open_partition(tmp_path / "t-0")
    assert await produce(partition, idempotent(clock, seq - 1)) == (last_offset, True)
    assert await produce(partition, idempotent(clock, seq)) == (last_offset + 1, False)
    partition.close()


async def test_open_removes_stray_snapshots_but_the_newest(tmp_path: Path) -> None:
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    for seq in range(60):
        await produce(partition, idempotent(clock, seq))
    segment_bases = bases(partition)
    partition.close()  # snapshots the log end offset, inside the active segment
    leo = partition.log.log_end_offset
    state = ProducerStateManager(tmp_path / "t-0")
    state.load_latest_snapshot(leo)
    for stray in (3, 17, 41):  # as a crash between a swap and its snapshot deletion leaves
        assert stray not in segment_bases
        state.take_snapshot(stray)
    assert leo not in segment_bases
    partition = open_partition(tmp_path / "t-0")
    snapshots = list_snapshots(tmp_path / "t-0")
    assert snapshots[-1] == leo  # the newest, recovery's starting point, stays
    assert set(snapshots[:-1]) <= segment_bases, snapshots
    assert await produce(partition, idempotent(clock, 59)) == (59, True)
    partition.close()


async def test_a_roll_lists_the_directory_only_when_the_log_start_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    listings: list[Path] = []
    real = producer_state.list_snapshots

    def counting(dir: Path) -> list[int]:
        listings.append(dir)
        return real(dir)

    monkeypatch.setattr(producer_state, "list_snapshots", counting)
    for seq in range(100):  # about 20 rolls at 600 bytes
        await produce(partition, idempotent(clock, seq))
    assert len(partition.log.segments()) > 10
    assert len(listings) <= 1
    partition.close()


async def test_the_newest_snapshot_is_kept_when_its_segment_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk is full, so the rolls' snapshots fail: the newest snapshot is then at the base
    of a segment the cleaner replaces; it stays, and recovery starts from it."""
    clock = Clock()
    partition = open_partition(tmp_path / "t-0")
    for seq in range(40):
        await produce(partition, idempotent(clock, seq))
    newest = list_snapshots(tmp_path / "t-0")[-1]
    assert newest == partition.log.active_segment.base_offset

    def full_disk(*args: object, **kwargs: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ProducerStateManager, "take_snapshot", full_disk)
    for seq in range(40, 80):  # every key again: the segment at ``newest`` empties
        await produce(partition, idempotent(clock, seq))
    assert partition.log.active_segment.base_offset > newest
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    assert await cleaner.clean_partition(TP, partition) is not None
    # the first pass grouped full segments; this one merges what they left
    assert await cleaner.clean_partition(TP, partition, force=True) is not None
    await cleaner.close()
    assert newest not in bases(partition)  # its segment was merged into an earlier one
    assert list_snapshots(tmp_path / "t-0")[-1] == newest
    monkeypatch.undo()
    partition.close()
