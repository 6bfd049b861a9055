"""A segment finds its last batches from memory (recent_batches.py): every answer must be the
one the index-and-scan lookup of the same files gives, before and after a truncation."""

from pathlib import Path

from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.recent_batches import KEPT
from tiered_mq.record.batch import assign_offset_and_epoch, read_header

from .helpers import make_batch

BASE = 100


def append(segment: LogSegment, counts: list[int], seed: int = 0) -> None:
    """One append of a batch of ``counts[i]`` records each, offsets from the segment's end."""
    buf, batches, offset = bytearray(), [], segment.next_offset()
    for i, count in enumerate(counts):
        batch = make_batch(count, seed=seed + i, value_size=10 + 7 * i)
        assign_offset_and_epoch(batch, 0, offset, 0)
        batches.append((len(buf), read_header(batch)))
        buf += batch
        offset += count
    segment.append(buf, batches)


def lookups(segment: LogSegment) -> list[tuple[int, int, object]]:
    """translate_offset of every offset (and one past the end), from the start and from each
    of the last three batch boundaries."""
    positions = [pos for pos, _ in segment.iter_headers()]
    return [
        (offset, start, segment.translate_offset(offset, start))
        for offset in range(BASE, segment.next_offset() + 1)
        for start in [0, *positions[-3:]]
    ]


def assert_same_as_reopened(tmp_path: Path, live: LogSegment) -> None:
    reopened = LogSegment.open(tmp_path, BASE, 64, 0)  # nothing remembered: index and scan
    try:
        assert lookups(live) == lookups(reopened)
    finally:
        reopened.close()


def test_the_last_batches_are_found_as_the_scan_finds_them(tmp_path: Path) -> None:
    segment = LogSegment.create(tmp_path, BASE, 64, 0)
    for i in range(3 * KEPT):  # more batches than are remembered, 1-3 per append
        append(segment, [1 + i % 4] * (1 + i % 3), seed=i)
    assert_same_as_reopened(tmp_path, segment)
    segment.close()


def test_after_a_truncation_new_batches_are_found_where_they_were_written(
    tmp_path: Path,
) -> None:
    segment = LogSegment.create(tmp_path, BASE, 64, 0)
    for i in range(KEPT):
        append(segment, [3], seed=i)
    segment.truncate_to(segment.next_offset() - 10)  # the last 4 batches go
    for i in range(3):  # other sizes where they were
        append(segment, [1, 5], seed=50 + i)
    assert_same_as_reopened(tmp_path, segment)
    segment.close()
