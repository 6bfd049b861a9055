from pathlib import Path

from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments


def test_floor_lookup(tmp_path: Path) -> None:
    segments = LogSegments()
    assert segments.floor(5) is None and segments.last() is None
    for base in (100, 0, 50):
        segments.add(LogSegment.create(tmp_path, base, 4096, 0))
    assert segments.base_offsets() == [0, 50, 100]
    assert [s.base_offset for s in segments] == [0, 50, 100]
    assert segments.floor(49).base_offset == 0  # type: ignore[union-attr]
    assert segments.floor(50).base_offset == 50  # type: ignore[union-attr]
    assert segments.floor(10**9).base_offset == 100  # type: ignore[union-attr]
    assert segments.higher(50).base_offset == 100  # type: ignore[union-attr]
    assert segments.higher(100) is None
    assert [s.base_offset for s in segments.from_offset(60)] == [50, 100]
    assert [s.base_offset for s in segments.at_or_above(50)] == [50, 100]
    assert 50 in segments and len(segments) == 3
    segments.remove(50)
    assert segments.floor(60).base_offset == 0  # type: ignore[union-attr]
    assert segments.first().base_offset == 0  # type: ignore[union-attr]
    assert segments.size_bytes() == 0
