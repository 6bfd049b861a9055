"""When the cleaner runs a pass: max.compaction.lag.ms.

- a log whose dirty ratio stays below ``min.cleanable.dirty.ratio`` is still cleaned once a
  dirty segment's first batch is older than ``max.compaction.lag.ms`` (Kafka's
  ``maxCompactionDelay``, KIP-354), and not before.
"""

from __future__ import annotations

from pathlib import Path

from .helpers import Clock, FakePartition, append, cleaner, open_log, read_records


def keys_below_active(partition: FakePartition) -> list[bytes | None]:
    active = partition.log.active_segment.base_offset
    return [r.key for r in read_records(partition.log) if r.offset < active]


async def test_max_compaction_lag_cleans_a_log_below_its_dirty_ratio(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(
        tmp_path / "t-0", clock, min_cleanable_dirty_ratio="0.9", max_compaction_lag_ms="60000"
    )
    for i in range(200):
        append(log, [(f"k{i % 5}".encode(), f"v{i}".encode())], clock)
    c, partition = cleaner(log, clock)
    assert await c.clean_once() == 1  # all dirty: ratio 1.0
    for i in range(40):  # a few updates: the ratio stays below 0.9
        append(log, [(f"k{i % 5}".encode(), f"late{i}".encode())], clock)
    clock.now += 1
    assert await c.clean_once() == 0
    assert len(keys_below_active(partition)) > 5
    clock.now += 59_999  # the oldest dirty batch is exactly max.compaction.lag.ms old
    assert await c.clean_once() == 0
    clock.now += 1  # past the lag: cleaned whatever the ratio
    assert await c.clean_once() == 1
    assert sorted(keys_below_active(partition)) == [f"k{i}".encode() for i in range(5)]
    assert await c.clean_once() == 0  # nothing dirty is left below the active segment
    log.close()
