import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiered_mq.hot.offset_index import OffsetIndex

BASE = 1_000


def _sparse_entries(draw_keys: list[int], draw_gaps: list[int]) -> list[tuple[int, int]]:
    keys = sorted(set(draw_keys))
    positions, pos = [], 0
    for gap in draw_gaps[: len(keys)]:
        pos += gap
        positions.append(pos)
    return [(BASE + k, p) for k, p in zip(keys, positions, strict=False)]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(0, 10_000), max_size=60),
    gaps=st.lists(st.integers(1, 5_000), min_size=60, max_size=60),
    targets=st.lists(st.integers(BASE - 5, BASE + 10_005), min_size=1, max_size=30),
)
def test_lookup_matches_sorted_reference(
    tmp_path_factory: pytest.TempPathFactory, keys: list[int], gaps: list[int], targets: list[int]
) -> None:
    path = tmp_path_factory.mktemp("idx") / "x.index"
    entries = _sparse_entries(keys, gaps)
    index = OffsetIndex(path, BASE)
    index.append(entries)
    reloaded = OffsetIndex(path, BASE)
    for idx in (index, reloaded):
        assert idx.entries() == entries
        for target in targets:
            floor = [e for e in entries if e[0] <= target]
            assert idx.lookup(target) == (floor[-1] if floor else (BASE, 0))
            by_pos = [e for e in entries if e[1] <= target - BASE]
            assert idx.lookup_by_position(target - BASE) == (by_pos[-1] if by_pos else (BASE, 0))


def test_file_format_is_big_endian_relative(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "a.index", BASE)
    index.append([(BASE + 3, 100), (BASE + 70, 5000)])
    assert (tmp_path / "a.index").read_bytes() == struct.pack(">IIII", 3, 100, 70, 5000)
    assert index.last_entry() == (BASE + 70, 5000)
    assert index.size_bytes == 16


def test_rejects_out_of_order(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "a.index", BASE)
    index.append([(BASE + 3, 100)])
    with pytest.raises(ValueError):
        index.append([(BASE + 3, 200)])
    with pytest.raises(ValueError):
        index.append([(BASE + 4, 100)])
    assert len(index) == 1


def test_truncate_and_torn_entry(tmp_path: Path) -> None:
    path = tmp_path / "a.index"
    index = OffsetIndex(path, BASE)
    index.append([(BASE + i * 10, i * 100) for i in range(1, 10)])
    index.truncate_to(BASE + 50)
    assert index.last_entry() == (BASE + 40, 400)
    index.truncate_to_position(300)
    assert index.last_entry() == (BASE + 20, 200)
    assert path.stat().st_size == 16
    index.close()
    with open(path, "ab") as f:
        f.write(b"\x00\x00\x00")  # a torn entry
    reloaded = OffsetIndex(path, BASE)
    assert reloaded.entries() == [(BASE + 10, 100), (BASE + 20, 200)]
    assert path.stat().st_size == 16
    assert reloaded.is_sane(201)
    assert not reloaded.is_sane(200)


def test_insane_order_detected(tmp_path: Path) -> None:
    path = tmp_path / "a.index"
    path.write_bytes(struct.pack(">IIII", 5, 100, 4, 200))
    assert not OffsetIndex(path, 0).is_sane(10_000)
