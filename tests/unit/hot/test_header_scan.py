"""header_scan.scan_headers against iter_batches on the same bytes, and its corruption cases."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiered_mq.hot.header_scan import SCAN_CHUNK, scan_headers
from tiered_mq.record.batch import HEADER_SIZE, iter_batches

from .helpers import make_batch


class Corrupt(Exception):
    pass


def _corrupt(position: int, reason: str) -> Corrupt:
    return Corrupt(position, reason)


def _log(batch_sizes: list[tuple[int, int]]) -> bytes:
    """Batches of (record count, value size), each with the next base offset."""
    out, offset = bytearray(), 0
    for count, value_size in batch_sizes:
        batch = make_batch(count, value_size=value_size, seed=offset)
        struct.pack_into(">q", batch, 0, offset)  # base offset (the header scan skips the CRC)
        out += batch
        offset += count
    return bytes(out)


def _scan(path: Path, position: int, end: int) -> Iterator[tuple[int, object]]:
    fd = os.open(path, os.O_RDONLY)
    try:
        yield from scan_headers(fd, position, end, _corrupt)
    finally:
        os.close(fd)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 20), st.sampled_from([0, 10, 3000, SCAN_CHUNK // 3])),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_scan_matches_iter_batches(
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[tuple[int, int]],
    data: st.DataObject,
) -> None:
    data_bytes = _log(sizes)
    path = tmp_path_factory.mktemp("scan") / "0.log"
    path.write_bytes(data_bytes)
    expected = iter_batches(data_bytes)
    start = data.draw(st.integers(0, len(expected) - 1))
    stop = data.draw(st.integers(start, len(expected)))
    end = expected[stop][0] if stop < len(expected) else len(data_bytes)
    got = list(_scan(path, expected[start][0], end))
    assert got == expected[start:stop]


def test_header_across_a_chunk_boundary(tmp_path: Path) -> None:
    data = _log([(1 + i % 3, 7 * (i % 5)) for i in range(1200)])  # well over one chunk
    path = tmp_path / "0.log"
    path.write_bytes(data)
    expected = iter_batches(data)
    starts = [p for p, _ in expected]
    # a start position from which some later header straddles the end of the first pread
    start = next(
        i
        for i, s in enumerate(starts)
        if any(s + SCAN_CHUNK - HEADER_SIZE < p < s + SCAN_CHUNK for p in starts)
    )
    assert list(_scan(path, starts[start], len(data))) == expected[start:]


def test_torn_header_and_zero_length_raise(tmp_path: Path) -> None:
    good = _log([(3, 10), (2, 10)])
    path = tmp_path / "0.log"
    path.write_bytes(good + good[: HEADER_SIZE - 1])  # a batch starts, its header is torn
    with pytest.raises(Corrupt) as torn:
        list(_scan(path, 0, len(good) + HEADER_SIZE - 1))
    assert torn.value.args == (len(good), "truncated batch header")
    assert len(list(_scan(path, 0, len(good)))) == 2  # an end at the boundary stops before it

    bad = bytearray(good)
    struct.pack_into(">i", bad, 8, 0)  # batch length 0: the scan would never advance
    path.write_bytes(bad)
    with pytest.raises(Corrupt, match="below header size"):
        list(_scan(path, 0, len(bad)))
