"""Crash at each step of a cleaning (files left as a crash would leave them), then recovery;
LocalLog.replace_segments; the real broker Partition keeps its idempotent producer state."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.compaction.cleaner import (
    CleanerStats,
    SegmentSource,
    build_offset_map,
    group_segments,
    plan_cleaning,
)
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.compaction.offset_map import OffsetMap
from tiered_mq.compaction.segment_rewrite import CleanedGroup, clean_group, producer_last_batches
from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.records import encode_batch

from .helpers import TP, Clock, append, open_log, read_records


def make_log(path: Path, clock: Clock) -> tuple[LocalLog, dict[bytes, bytes]]:
    log = open_log(path, clock)
    latest: dict[bytes, bytes] = {}
    for i in range(120):
        key, value = f"k{i % 4}".encode(), f"v{i}".encode()
        append(log, [(key, value)], clock)
        latest[key] = value
    # rolled at 600 bytes, cleaned in groups of up to 5000 bytes
    log.update_config(dataclasses.replace(log.config, segment_bytes=5000))
    return log, latest


def first_group(log: LocalLog, clock: Clock) -> CleanedGroup:
    """Pass 1 and pass 2 of the first group only, leaving its ``.swap`` files."""
    plan = plan_cleaning(log, None, log.log_end_offset, clock.now)
    assert plan is not None
    sources = [SegmentSource.of(log, s) for s in plan.segments]
    omap = OffsetMap(1000)
    end = build_offset_map(sources, plan.first_dirty_offset, plan.end_offset, omap)
    chosen = [s for s in sources if s.next_base <= end]
    groups = group_segments(chosen, log.config)
    assert len(groups[0]) > 1
    last = producer_last_batches(chosen)
    cleaned = clean_group(log.dir, groups[0], omap, last, log.config, clock.now, CleanerStats())
    for s in sources:
        s.close()
    assert cleaned is not None
    return cleaned


def crash(log: LocalLog) -> None:
    """The process dies: data already written stays, open files go, nothing is checkpointed."""
    log.flush()
    for segment in log.segments():
        segment.close()


def view(log: LocalLog) -> dict[bytes, bytes | None]:
    out: dict[bytes, bytes | None] = {}
    offsets = []
    for r in read_records(log):
        assert r.key is not None
        out[r.key] = r.value
        offsets.append(r.offset)
    assert offsets == sorted(set(offsets))
    return out


def test_crash_with_cleaned_files_keeps_the_old_segments(tmp_path: Path) -> None:
    clock = Clock()
    log, latest = make_log(tmp_path / "t-0", clock)
    before = [(r.offset, r.value) for r in read_records(log)]
    cleaned = first_group(log, clock)
    for path in cleaned.files:  # crash before the rename to .swap
        path.rename(str(path)[: -len(log_files.SWAP_SUFFIX)] + log_files.CLEANED_SUFFIX)
    crash(log)
    reopened = open_log(tmp_path / "t-0", clock)
    assert [(r.offset, r.value) for r in read_records(reopened)] == before
    assert not [p for p in reopened.dir.iterdir() if p.name.endswith(".cleaned")]
    assert view(reopened) == latest
    reopened.close()


@pytest.mark.parametrize("renamed_old", [0, 1, 2])
def test_crash_with_swap_files_completes_the_swap(tmp_path: Path, renamed_old: int) -> None:
    clock = Clock()
    log, latest = make_log(tmp_path / "t-0", clock)
    n_before = len(read_records(log))
    cleaned = first_group(log, clock)
    # crash in replace_segments after ``renamed_old`` old segments went to .deleted
    for segment in cleaned.old[:renamed_old]:
        segment.rename_suffix(log_files.DELETED_SUFFIX)
    crash(log)
    reopened = open_log(tmp_path / "t-0", clock)
    names = [p.name for p in reopened.dir.iterdir()]
    assert not [n for n in names if n.endswith((".swap", ".deleted"))]
    bases = [s.base_offset for s in reopened.segments()]
    assert cleaned.base_offset in bases
    assert not [s.base_offset for s in cleaned.old[1:] if s.base_offset in bases]
    assert len(read_records(reopened)) < n_before
    assert view(reopened) == latest
    assert reopened.log_end_offset == log.log_end_offset
    append(reopened, [(b"k0", b"after")], clock)  # appendable
    assert view(reopened)[b"k0"] == b"after"
    reopened.close()


def test_replace_segments_swaps_in_and_refuses_stale_plans(tmp_path: Path) -> None:
    clock = Clock()
    log, latest = make_log(tmp_path / "t-0", clock)
    cleaned = first_group(log, clock)
    with pytest.raises(ValueError):
        log.replace_segments(cleaned.old[1:], cleaned.base_offset)  # not the first segment
    with pytest.raises(ValueError):
        log.replace_segments([*cleaned.old[:1], log.active_segment], cleaned.base_offset)
    new = log.replace_segments(cleaned.old, cleaned.base_offset)
    assert log.segments()[0] is new and new.base_offset == cleaned.base_offset
    assert log.next_segment_base(new) == cleaned.old[-1].next_offset()
    assert view(log) == latest
    with pytest.raises(ValueError):  # the old segments are gone: a stale plan is refused
        log.replace_segments(cleaned.old, cleaned.base_offset)
    names = [p.name for p in log.dir.iterdir()]
    assert not [n for n in names if n.endswith((".swap", ".cleaned"))]
    log.close()
    reopened = open_log(tmp_path / "t-0", clock)
    assert view(reopened) == latest
    reopened.close()


async def test_idempotent_producer_state_survives_cleaning_and_restart(tmp_path: Path) -> None:
    clock = Clock()
    props = {"cleanup.policy": "compact", "segment.bytes": "600", "file.delete.delay.ms": "0"}
    from tiered_mq.hot.log_config import LogConfig

    config = LogConfig.from_properties(props)
    partition = Partition.open(TP, tmp_path / "t-0", config)

    def batch(seq: int) -> bytearray:
        records = [(b"k", f"v{seq}".encode(), [], clock.now)]
        return bytearray(encode_batch(records, producer_id=9, producer_epoch=1, base_sequence=seq))

    for seq in range(60):
        buf = batch(seq)
        await partition.append_as_leader(buf, validate_records(buf, 1 << 20))
    cleaner = LogCleaner(lambda: {TP: partition}, registry=None, clock=clock)
    stats = await cleaner.clean_partition(TP, partition)
    assert stats is not None and stats.records_removed > 0
    await cleaner.close()
    entry = partition.producer_state.producers[9]
    assert entry.epoch == 1
    dup = batch(59)
    result = await partition.append_as_leader(dup, validate_records(dup, 1 << 20))
    assert result.duplicate and result.base_offset == 59
    partition.close()
    partition = Partition.open(TP, tmp_path / "t-0", config)
    dup = batch(59)
    result = await partition.append_as_leader(dup, validate_records(dup, 1 << 20))
    assert result.duplicate and result.base_offset == 59
    nxt = batch(60)
    result = await partition.append_as_leader(nxt, validate_records(nxt, 1 << 20))
    assert not result.duplicate and result.base_offset == 60
    partition.close()
