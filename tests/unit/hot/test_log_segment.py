from pathlib import Path

from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.record.batch import assign_offset_and_epoch, read_header

from .helpers import make_batch


def segment_with(tmp_path: Path, n: int, base: int = 100, interval: int = 200) -> LogSegment:
    segment = LogSegment.create(tmp_path, base, interval, 0)
    offset = base
    for i in range(n):
        batch = make_batch(4, timestamp=10 * i, seed=i % 10)  # equal sizes
        assign_offset_and_epoch(batch, 0, offset, 0)
        segment.append(batch, [(0, read_header(batch))])
        offset += 4
    return segment


def test_index_entries_follow_kafka_rule(tmp_path: Path) -> None:
    size = len(make_batch(4))
    segment = segment_with(tmp_path, 12)
    # an entry (last offset, position) for a batch once > 200 bytes followed the previous entry
    expected, since, position = [], 0, 0
    for i in range(12):
        if since > 200:
            expected.append((100 + 4 * i + 3, position))
            since = 0
        position += size
        since += size
    assert segment.offset_index.entries() == expected
    assert segment.next_offset() == 148
    assert segment.max_timestamp() == 113 and segment.offset_of_max_timestamp() == 147
    segment.on_become_inactive()
    assert segment.time_index.last_entry() == (113, 147)


def test_translate_read_and_truncate(tmp_path: Path) -> None:
    size = len(make_batch(4))
    segment = segment_with(tmp_path, 12)
    for offset in range(100, 148):
        position, header = segment.translate_offset(offset)  # type: ignore[misc]
        assert header.base_offset == offset - offset % 4 and position == (offset - 100) // 4 * size
    assert segment.translate_offset(148) is None
    first, region = segment.read(105, 3 * size + 5, segment.size, True)  # type: ignore[misc]
    assert (first, region.position, region.length) == (104, size, 3 * size)
    assert segment.read(105, 3 * size, size, True) is None  # max position at its start
    assert segment.read(105, 3 * size, 2 * size, True)[1].length == size  # type: ignore[index]
    assert segment.find_by_timestamp(55)[1].base_offset == 124  # type: ignore[index]
    assert segment.find_by_timestamp(10_000) is None
    assert segment.truncate_to(121) == 7 * size
    assert (segment.size, segment.next_offset(), segment.max_timestamp()) == (5 * size, 120, 43)
    assert all(p < segment.size for _, p in segment.offset_index.entries())
    assert segment.truncate_to(500) == 0


def test_reopened_segment_recomputes_tail(tmp_path: Path) -> None:
    segment = segment_with(tmp_path, 9)
    segment.close()
    reopened = LogSegment.open(tmp_path, 100, 200, 0)
    assert reopened.next_offset() == 136 and reopened.max_timestamp() == 83
    assert reopened.recover(validate_from=0) == 0
    assert reopened.next_offset() == 136
