"""When the cleaner runs a pass: max.compaction.lag.ms, and the first dirty offset of a log.

- a log whose dirty ratio stays below ``min.cleanable.dirty.ratio`` is still cleaned once a
  dirty segment's first batch is older than ``max.compaction.lag.ms`` (Kafka's
  ``maxCompactionDelay``, KIP-354), and not before;
- a topic deleted and created again under the same name is a new log: the cleaner does not
  take the old log's first dirty offset for it (duplicates below it would never be removed);
- a log whose data cannot be read (a corrupt batch) is marked uncleanable after one failed
  pass, as Kafka does: one error in the broker log, later sweeps skip it (they would only read
  up to the same batch again), other partitions are cleaned, a new log at its name is cleaned.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tiered_mq.compaction.cleaner import read_cleaner_checkpoint
from tiered_mq.topic_partition import TopicPartition

from .helpers import TP, Clock, FakePartition, append, cleaner, open_log, read_records


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


async def test_a_recreated_log_does_not_inherit_the_old_checkpoint(tmp_path: Path) -> None:
    clock = Clock()
    old = open_log(tmp_path / "t-0", clock)
    for i in range(300):
        append(old, [(f"old{i % 5}".encode(), b"x" * 20)], clock)
    partitions = {TP: FakePartition(old)}
    c, _ = cleaner(old, clock)
    c._partitions = lambda: partitions
    assert await c.clean_once() == 1
    checkpoint = read_cleaner_checkpoint(old.dir)
    assert checkpoint is not None and checkpoint > 100
    old.close()
    # the topic is deleted and created again: a new directory, a new log, the same name
    new = open_log(tmp_path / "t-0-recreated", clock)
    for i in range(100):  # keys never written again: only their last record may stay
        append(new, [(f"gone{i % 4}".encode(), f"v{i}".encode())], clock)
    for i in range(checkpoint):
        append(new, [(f"k{i % 5}".encode(), b"y" * 20)], clock)
    partitions[TP] = FakePartition(new)
    assert await c.clean_once() == 1
    below = keys_below_active(partitions[TP])
    assert sorted(k for k in below if k is not None and k.startswith(b"gone")) == [
        b"gone0",
        b"gone1",
        b"gone2",
        b"gone3",
    ]
    assert read_cleaner_checkpoint(new.dir) == new.active_segment.base_offset
    new.close()


async def test_a_corrupt_log_is_marked_uncleanable_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    bad, good = open_log(tmp_path / "bad-0", clock), open_log(tmp_path / "good-0", clock)
    for log in (bad, good):
        for i in range(100):
            append(log, [(f"k{i % 5}".encode(), f"v{i}".encode())], clock)
    first = bad.segments()[0].log_path
    with open(first, "r+b") as f:  # a flipped payload byte: the batch's CRC no longer matches
        f.seek(first.stat().st_size - 1)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 0xFF]))
    other = TopicPartition("other", 0)
    partitions = {TP: FakePartition(bad), other: FakePartition(good)}
    c, _ = cleaner(bad, clock)
    c._partitions = lambda: partitions
    with caplog.at_level(logging.INFO, logger="tiered_mq.compaction.cleaner_manager"):
        assert await c.clean_once() == 1  # the other partition is cleaned all the same
        for i in range(3):
            append(bad, [(b"k0", f"late{i}".encode())], clock)
            assert await c.clean_once() == 0
    failures = [r for r in caplog.records if "cleaning failed" in r.getMessage()]
    assert len(failures) == 1 and "uncleanable" in failures[0].getMessage()
    assert c.metrics.uncleanable._value.get() == 1
    # the topic deleted and created again: the new log is cleaned
    bad.close()
    partitions[TP] = FakePartition(open_log(tmp_path / "bad-0-new", clock))
    for i in range(100):
        append(partitions[TP].log, [(f"k{i % 5}".encode(), b"x")], clock)
    assert await c.clean_once() == 1
    assert c.metrics.uncleanable._value.get() == 0
    partitions[TP].log.close()
    good.close()


async def test_a_log_is_cleaned_only_above_its_dirty_ratio(tmp_path: Path) -> None:
    """Kafka cleans a log whose dirty ratio is strictly greater than
    ``min.cleanable.dirty.ratio`` (LogCleanerManager), so 1.0 leaves even an all-dirty log
    alone (only ``max.compaction.lag.ms`` would clean it); just below 1.0 it is cleaned."""
    clock = Clock()
    for ratio, passes in (("1.0", 0), ("0.99", 1)):
        log = open_log(tmp_path / f"t-{ratio}", clock, min_cleanable_dirty_ratio=ratio)
        for i in range(200):
            append(log, [(f"k{i % 5}".encode(), f"v{i}".encode())], clock)
        c, _ = cleaner(log, clock)
        assert await c.clean_once() == passes, ratio  # all dirty: ratio 1.0
        log.close()
