"""The log cleaner on a real LocalLog: latest value per key, tombstones, offsets, idempotence."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from tiered_mq.compaction.cleaner import CLEANER_CHECKPOINT, read_cleaner_checkpoint
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.batch import DELETE_HORIZON_FLAG
from tiered_mq.record.control import encode_control_batch

from .helpers import TP, Clock, append, cleaner, open_log, read_batches, read_records


def fill(log: LocalLog, clock: Clock, n: int, keys: int, seed: int = 1) -> dict[bytes, bytes]:
    """``n`` single-record batches over ``keys`` keys; returns the latest value per key."""
    rng = random.Random(seed)
    latest: dict[bytes, bytes] = {}
    for i in range(n):
        key = f"key-{rng.randrange(keys)}".encode()
        value = f"value-{i}".encode()
        append(log, [(key, value)], clock)
        latest[key] = value
        clock.now += 1
    return latest


async def test_latest_value_per_key_wins_and_offsets_are_kept(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    latest = fill(log, clock, 300, keys=10)
    before = {r.offset: (r.key, r.value) for r in read_records(log)}
    size_before, leo = log.size_bytes(), log.log_end_offset
    active_base = log.active_segment.base_offset
    c, _ = cleaner(log, clock)
    stats = await c.clean_partition(TP, c._partitions()[TP])
    assert stats is not None and stats.records_removed > 0
    after = read_records(log)
    # offsets preserved and strictly increasing; every survivor is an original record
    offsets = [r.offset for r in after]
    assert offsets == sorted(set(offsets))
    assert all(before[r.offset] == (r.key, r.value) for r in after)
    # below the active segment: one record per key, the latest; the active segment untouched
    cleaned = [r for r in after if r.offset < active_base]
    assert len({r.key for r in cleaned}) == len(cleaned)
    view: dict[bytes, bytes] = {}
    for r in after:
        assert r.key is not None and r.value is not None
        view[r.key] = r.value
    assert view == latest
    assert [r.offset for r in after if r.offset >= active_base] == list(range(active_base, leo))
    assert log.log_end_offset == leo and log.size_bytes() < size_before // 3
    assert read_cleaner_checkpoint(log.dir) == active_base
    # segments grouped up to segment.bytes, no leftover transient files
    names = [p.name for p in log.dir.iterdir()]
    assert not [n for n in names if n.endswith((".cleaned", ".swap"))]
    assert (log.dir / CLEANER_CHECKPOINT).exists()
    assert len(log.segments()) < 300 // 5
    # nothing dirty now: a second pass does not run
    assert await c.clean_once() == 0
    log.close()
    reopened = open_log(tmp_path / "t-0", clock)
    assert [(r.offset, r.value) for r in read_records(reopened)] == [
        (r.offset, r.value) for r in after
    ]
    reopened.close()


async def test_dirty_ratio_and_high_watermark_bound_the_cleaning(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, min_cleanable_dirty_ratio="0.9")
    fill(log, clock, 200, keys=5)
    c, partition = cleaner(log, clock)
    await c.clean_partition(TP, partition)  # first pass: everything is dirty
    fill(log, clock, 10, keys=5, seed=2)  # a little dirt: ratio below 0.9
    assert await c.clean_once() == 0
    # nothing at or above the high watermark is cleaned
    partition.high_watermark = log.segments()[1].base_offset
    c._checkpoints.clear()
    (log.dir / CLEANER_CHECKPOINT).unlink()
    fill(log, clock, 100, keys=5, seed=3)
    stats = await c.clean_partition(TP, partition)
    assert stats is not None
    assert read_cleaner_checkpoint(log.dir) == partition.high_watermark
    log.close()


async def test_min_compaction_lag_keeps_young_segments_dirty(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, min_compaction_lag_ms="1000")
    fill(log, clock, 100, keys=3)
    c, partition = cleaner(log, clock)
    assert await c.clean_partition(TP, partition) is None
    clock.now += 2000
    assert await c.clean_partition(TP, partition) is not None
    log.close()


async def test_tombstones_kept_for_delete_retention_then_removed(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, delete_retention_ms="5000")
    for i in range(40):
        append(log, [(b"a", f"a{i}".encode()), (b"b", f"b{i}".encode())], clock)
    append(log, [(b"a", None)], clock)  # tombstone for a
    for i in range(40):
        append(log, [(b"b", f"b-late{i}".encode())], clock)
    c, partition = cleaner(log, clock)
    await c.clean_partition(TP, partition)
    records = read_records(log)
    assert [r.value for r in records if r.key == b"a"] == [None]  # only the tombstone
    flagged = [h for h, rs in read_batches(log) if any(r.value is None for r in rs)]
    assert flagged and all(h.attributes & DELETE_HORIZON_FLAG for h in flagged)
    assert flagged[0].base_timestamp == clock.now + 5000
    tombstone = next(r for r in records if r.key == b"a")
    assert tombstone.timestamp == 1_000_000  # record timestamps survive the horizon
    # before the horizon: a forced pass keeps it
    clock.now += 4000
    assert await c.clean_once() == 0
    assert [r.value for r in read_records(log) if r.key == b"a"] == [None]
    # after the horizon: the sweep runs by itself (no new dirt) and drops it
    clock.now += 2000
    assert await c.clean_once() == 1
    assert [r for r in read_records(log) if r.key == b"a"] == []
    assert [r.value for r in read_records(log) if r.key == b"b"][-1] == b"b-late39"
    log.close()


async def test_idempotent_batches_keep_producer_fields_and_last_batch(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    for i in range(30):
        append(
            log,
            [(b"k", f"p{i}-0".encode()), (b"k", f"p{i}-1".encode())],
            clock,
            producer_id=77,
            producer_epoch=3,
            base_sequence=2 * i,
        )
    for i in range(30):
        append(log, [(b"k", f"plain{i}".encode())], clock)
    c, partition = cleaner(log, clock)
    await c.clean_partition(TP, partition)
    batches = read_batches(log)
    mine = [h for h, _ in batches if h.producer_id == 77]
    # every record of producer 77 is superseded, but its last batch survives (empty), with the
    # sequence range and offsets it had: the producer state can be rebuilt from the log
    # (other empty survivors end a group: the new segment keeps its old end offset)
    assert len(mine) < 10 and all(h.records_count == 0 for h in mine)
    last = mine[-1]
    assert (last.producer_epoch, last.base_sequence, last.records_count) == (3, 58, 0)
    assert last.base_offset == 58 and last.last_offset_delta == 1
    headers = [h for h, _ in batches]
    assert all(a.next_offset <= b.base_offset for a, b in itertools.pairwise(headers))
    log.close()


async def test_keyless_records_are_removed_and_control_batches_kept(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)

    append(
        log,
        [(b"k", b"txn")],
        clock,
        producer_id=5,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
    )
    log.append_as_leader(bytearray(encode_control_batch(5, 0, True, 0, clock.now)), 0)
    for i in range(40):
        append(log, [(None, b"nokey"), (b"k", f"v{i}".encode())], clock)
    c, partition = cleaner(log, clock)
    await c.clean_partition(TP, partition)
    batches = read_batches(log)
    assert any(h.is_control for h, _ in batches)
    active = log.active_segment.base_offset
    assert all(r.key is not None for r in read_records(log) if r.offset < active)
    assert any(r.key is None for r in read_records(log))  # the active segment is untouched
    log.close()
