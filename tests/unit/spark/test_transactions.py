from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import CorruptRecordError
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.segment_reader import read_split
from tiered_mq.spark.transactions import AbortedTxn, encode_txn_index, parse_txn_index

T0 = 1_700_000_000_000


def txn_rows(tag: bytes, n: int = 3) -> list[tuple[bytes, bytes, tuple[()], int]]:
    return [(tag, b"%s-%d" % (tag, i), (), T0 + i) for i in range(n)]


def values(root: Path, **options: str) -> list[bytes]:
    bucket = open_bucket(f"file://{root}")
    opts = ReadOptions.parse({"path": f"file://{root}", "topic": "t", **options})
    out: list[bytes] = []
    for split in plan(bucket, opts, Pushed()):
        for batch in read_split(bucket, split):
            out += batch.column("value").to_pylist()
    return out


def test_txn_index_round_trip_and_corruption() -> None:
    entries = [AbortedTxn(7, 10, 20), AbortedTxn(8, 0, 99)]
    assert parse_txn_index(encode_txn_index(entries)) == entries
    with pytest.raises(CorruptRecordError):
        parse_txn_index(encode_txn_index(entries)[:-1])


def test_aborted_transaction_in_the_same_segment_is_dropped(tmp_path: Path) -> None:
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0)
    txn = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}
    w.append(txn_rows(b"plain"))
    first, _ = w.append(txn_rows(b"aborted"), **txn)
    w.append(txn_rows(b"other"), producer_id=9, producer_epoch=0, is_transactional=True)
    w.append(txn_rows(b"aborted2"), **txn)
    w.control(5, commit=False, timestamp=T0, first_offset=first)
    w.control(9, commit=True, timestamp=T0, first_offset=first)
    w.append(txn_rows(b"committed"), **txn)
    w.control(5, commit=True, timestamp=T0, first_offset=first)
    w.roll(with_txnindex=False)  # the control records alone decide
    got = values(tmp_path)
    assert not [v for v in got if v.startswith(b"aborted")]
    assert len(got) == 9 and {v.split(b"-")[0] for v in got} == {b"plain", b"other", b"committed"}
    uncommitted = values(tmp_path, **{"isolation.level": "read_uncommitted"})
    assert len(uncommitted) == 15  # control records are never rows


def test_abort_marker_in_a_later_segment_uses_the_txn_index(tmp_path: Path) -> None:
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0)
    txn = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}
    first, _ = w.append(txn_rows(b"aborted"), **txn)
    w.append(txn_rows(b"plain"))
    w.roll()
    w.append(txn_rows(b"plain2"))
    w.control(5, commit=False, timestamp=T0, first_offset=first)
    w.roll()  # this segment's .txnindex names the transaction of the previous one
    got = values(tmp_path)
    assert sorted(got) == sorted(v for _, v, _, _ in txn_rows(b"plain") + txn_rows(b"plain2"))
    # Reading only the first segment still drops it (the planner passes later entries).
    assert not [v for v in values(tmp_path, endingOffsets='{"t": {"0": 6}}') if b"aborted" in v]


def test_abort_marker_in_a_later_segment_without_txn_index(tmp_path: Path) -> None:
    """The broker uploads no .txnindex: the reader looks ahead for the marker."""
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0, index_interval=100)
    txn = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}
    first, _ = w.append(txn_rows(b"aborted"), **txn)
    w.append(txn_rows(b"plain"))
    w.roll(with_txnindex=False)
    w.append(txn_rows(b"plain2"))
    w.roll(with_txnindex=False)
    w.append(txn_rows(b"aborted2"), **txn)  # the same open transaction goes on
    w.control(5, commit=False, timestamp=T0, first_offset=first)
    w.append(txn_rows(b"undecided"), producer_id=6, producer_epoch=0, is_transactional=True)
    w.roll(with_txnindex=False)  # producer 6's marker is not uploaded yet: the read stops there
    expected = [b"plain-0", b"plain-1", b"plain-2", b"plain2-0", b"plain2-1", b"plain2-2"]
    assert sorted(values(tmp_path)) == sorted(expected)
    # Byte-range splits of one segment look ahead through the rest of it too.
    assert sorted(values(tmp_path, maxBytesPerSplit="100")) == sorted(expected)
    assert len(values(tmp_path, **{"isolation.level": "read_uncommitted"})) == 15
