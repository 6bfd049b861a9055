"""The .txnindex file: Kafka's 34-byte AbortedTxn entries, torn tails, truncation, overlap."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tiered_mq.hot.transaction_index import (
    ENTRY_SIZE,
    AbortedTxn,
    TransactionIndex,
    decode_entries,
)


def test_entry_is_kafkas_layout() -> None:
    e = AbortedTxn(producer_id=7, first_offset=10, last_offset=20, last_stable_offset=21)
    assert ENTRY_SIZE == 34
    assert e.encode() == struct.pack(">hqqqq", 0, 7, 10, 20, 21)
    assert decode_entries(e.encode()) == [e]


def test_append_read_and_torn_tail(tmp_path: Path) -> None:
    index = TransactionIndex(tmp_path, 100)
    assert index.path.name == "00000000000000000100.txnindex"
    assert index.entries() == []
    a, b = AbortedTxn(1, 100, 110, 111), AbortedTxn(2, 105, 120, 121)
    index.append(a)
    with open(index.path, "ab") as f:
        f.write(b"\x00\x00\x00")  # a crash mid-write
    assert index.entries() == [a]
    index.append(b)  # cuts the torn bytes first
    assert index.path.stat().st_size == 2 * ENTRY_SIZE
    assert index.entries() == [a, b]


def test_truncate_to_drops_markers_past_the_log_end(tmp_path: Path) -> None:
    index = TransactionIndex(tmp_path, 0)
    entries = [AbortedTxn(1, 0, 5, 6), AbortedTxn(2, 3, 9, 10), AbortedTxn(3, 8, 12, 13)]
    for e in entries:
        index.append(e)
    assert index.truncate_to(10) == entries[:2]
    assert index.entries() == entries[:2]
    assert index.truncate_to(100) == entries[:2]


def test_unknown_version_is_an_error() -> None:
    with pytest.raises(ValueError):
        decode_entries(struct.pack(">hqqqq", 1, 1, 2, 3, 4))


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 5, [1]),  # only the first overlaps
        (6, 7, [2]),  # inside the second
        (11, 21, [2, 3]),  # the second ends at 12, the third starts at 20
        (13, 15, []),  # between them
        (0, 100, [1, 2, 3]),
    ],
)
def test_overlaps(start: int, end: int, expected: list[int]) -> None:
    entries = [AbortedTxn(3, 20, 25, 26), AbortedTxn(1, 0, 4, 5), AbortedTxn(2, 6, 12, 13)]
    got = sorted(e.producer_id for e in entries if e.overlaps(start, end))
    assert got == expected
