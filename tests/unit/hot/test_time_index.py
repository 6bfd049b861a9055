import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiered_mq.hot.time_index import TimeIndex

BASE = 500


@settings(max_examples=60, deadline=None)
@given(
    candidates=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 50)), max_size=60),
    targets=st.lists(st.integers(-5, 10**6 + 5), min_size=1, max_size=30),
)
def test_lookup_matches_sorted_reference(
    tmp_path_factory: pytest.TempPathFactory,
    candidates: list[tuple[int, int]],
    targets: list[int],
) -> None:
    path = tmp_path_factory.mktemp("tidx") / "x.timeindex"
    index = TimeIndex(path, BASE)
    # Feed random (timestamp, offset step) pairs; the index keeps only growing timestamps.
    offset, fed, expected = BASE, [], []
    last_ts = -1
    for ts, step in candidates:
        offset += step
        fed.append((ts, offset))
        if ts > last_ts:
            expected.append((ts, offset))
            last_ts = ts
    index.maybe_append(fed)
    reloaded = TimeIndex(path, BASE)
    for idx in (index, reloaded):
        assert idx.entries() == expected
        assert idx.is_sane()
        for target in targets:
            below = [e for e in expected if e[0] < target]
            assert idx.lookup(target) == (below[-1] if below else (-1, BASE))


def test_format_truncate_and_last_entry(tmp_path: Path) -> None:
    path = tmp_path / "a.timeindex"
    index = TimeIndex(path, BASE)
    assert index.last_entry() == (-1, BASE)
    index.maybe_append([(10, BASE + 1), (10, BASE + 2), (20, BASE + 5), (30, BASE + 9)])
    assert path.read_bytes() == struct.pack(">qIqIqI", 10, 1, 20, 5, 30, 9)
    assert index.last_entry() == (30, BASE + 9)
    index.truncate_to(BASE + 5)
    assert index.entries() == [(10, BASE + 1)]
    with pytest.raises(ValueError):
        index.maybe_append([(40, BASE)])
    assert not TimeIndex(path, BASE).is_sane(next_offset=BASE + 1)
    assert TimeIndex(path, BASE).is_sane(next_offset=BASE + 2)
