"""read_committed stops each partition at the bucket's last stable offset (stable_offset.py):
the first batch of a transaction whose marker is not uploaded, within the lookahead's reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter
from tests.unit.spark.test_reader import CountingBucket
from tests.unit.spark.test_transactions import T0, txn_rows, values
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.record.batch import read_header
from tiered_mq.record.control import encode_control_batch
from tiered_mq.record.records import encode_batch
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.stable_offset import first_undecided
from tiered_mq.spark.transactions import LOOKAHEAD_SEGMENTS

P5 = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}
P9 = {"producer_id": 9, "producer_epoch": 0, "is_transactional": True}


def test_first_undecided() -> None:
    def data(offset: int, pid: int = -1) -> bytes:
        return encode_batch(
            txn_rows(b"r", 2), base_offset=offset, producer_id=pid, is_transactional=pid >= 0
        )

    def marker(offset: int, pid: int) -> bytes:
        return encode_control_batch(pid, 0, offset % 2 == 0, 0, T0, base_offset=offset)

    log = [data(0), data(2, 5), data(4, 9), marker(6, 5), data(7), data(9, 5), data(11, 5)]
    headers = [read_header(b) for b in log]
    assert first_undecided(headers) == 4  # producer 9 from 4, producer 5 again from 9
    assert first_undecided([*headers, read_header(marker(13, 9))]) == 9
    assert (
        first_undecided([*headers, read_header(marker(13, 9)), read_header(marker(14, 5))]) is None
    )
    assert first_undecided([read_header(data(0)), read_header(marker(2, 5))]) is None


def plan_log_reads(root: Path, **options: str) -> int:
    """.log objects the planner (the driver) reads."""
    bucket = CountingBucket(open_bucket(f"file://{root}"))
    plan(bucket, ReadOptions.parse({"path": f"file://{root}", "topic": "t", **options}), Pushed())
    return bucket.log_reads()


@pytest.mark.parametrize("snapshots", [True, False])
@pytest.mark.parametrize("commit", [True, False])
def test_read_stops_at_the_first_undecided_transaction(
    tmp_path: Path, snapshots: bool, commit: bool
) -> None:
    w = PartitionWriter(open_sync_store(f"file://{tmp_path}"), "", "t", 0, index_interval=50)
    w.append(txn_rows(b"plain"))
    first9, _ = w.append(txn_rows(b"p9a"), **P9)
    w.control(9, commit=True, timestamp=T0, first_offset=first9)
    w.roll(with_snapshot=snapshots)
    w.append(txn_rows(b"plain2"))
    first5, _ = w.append(txn_rows(b"p5a"), **P5)  # offset 10: producer 5's marker is missing
    first9, _ = w.append(txn_rows(b"p9b"), **P9)
    w.control(9, commit=True, timestamp=T0, first_offset=first9)  # decided, but after offset 10
    w.append(txn_rows(b"plain3"))
    w.roll(with_snapshot=snapshots)
    w.append(txn_rows(b"p5b"), **P5)
    w.append(txn_rows(b"plain4"))
    w.roll(with_snapshot=snapshots)
    below = [b"%s-%d" % (tag, i) for tag in (b"plain", b"p9a", b"plain2") for i in range(3)]
    assert sorted(values(tmp_path)) == sorted(below)
    # every split of the partition stops there, a byte-range split of a segment too
    assert sorted(values(tmp_path, maxBytesPerSplit="100")) == sorted(below)
    assert values(tmp_path, startingOffsets='{"t": {"0": 10}}') == []
    assert plan_log_reads(tmp_path) == (0 if snapshots else 3)
    everything = values(tmp_path, **{"isolation.level": "read_uncommitted"})
    assert len(everything) == 24

    w.control(5, commit=commit, timestamp=T0, first_offset=first5)  # the marker is uploaded
    w.append(txn_rows(b"plain5"))
    w.roll(with_snapshot=snapshots)
    decided = values(tmp_path)
    if commit:
        assert sorted(decided) == sorted([*everything, *(b"plain5-%d" % i for i in range(3))])
    else:
        assert not [v for v in decided if v.startswith(b"p5")]
        assert len(decided) == 24 - 6 + 3


def write_long(root: Path, snapshots: bool, gap: int, marker: bool) -> int:
    """Producer 5's transaction starts in segment 0, ``gap`` segments of plain records follow;
    then either its COMMIT (``marker``) or another batch of it, then 2 more segments.
    Returns the first offset of that last segment of producer 5."""
    w = PartitionWriter(open_sync_store(f"file://{root}"), "", "t", 0)
    first, _ = w.append(txn_rows(b"long"), **P5)
    w.roll(with_snapshot=snapshots)
    for i in range(gap):
        w.append(txn_rows(b"gap%d" % i))
        w.roll(with_snapshot=snapshots)
    last = w.next_offset
    if marker:
        w.control(5, commit=True, timestamp=T0, first_offset=first)
    else:
        w.append(txn_rows(b"long2"), **P5)
    w.roll(with_snapshot=snapshots)
    for i in range(2):
        w.append(txn_rows(b"after%d" % i))
        w.roll(with_snapshot=snapshots)
    return last


@pytest.mark.parametrize("snapshots", [True, False])
def test_a_long_committed_transaction_is_returned(tmp_path: Path, snapshots: bool) -> None:
    """Its marker lies 21 segments after its data, beyond the lookahead: kept, not dropped."""
    gap = LOOKAHEAD_SEGMENTS + 4
    write_long(tmp_path, snapshots, gap, marker=True)
    got = values(tmp_path)
    assert len(got) == 3 * (1 + gap + 2) and b"long-0" in got
    # the tail only: the last LOOKAHEAD_SEGMENTS + 1 of 24 segments (none with a snapshot)
    assert plan_log_reads(tmp_path) == (0 if snapshots else LOOKAHEAD_SEGMENTS + 1)
    # a read that ends before the tail reads none of it
    assert plan_log_reads(tmp_path, endingOffsets='{"t": {"0": 9}}') == 0


@pytest.mark.parametrize("snapshots", [True, False])
def test_an_undecided_transaction_older_than_the_tail(tmp_path: Path, snapshots: bool) -> None:
    """Its batch before the tail is returned (the lookahead from it is cut off by the cap, as
    before); the read stops at its first batch in the tail."""
    gap = LOOKAHEAD_SEGMENTS + 4
    cut = write_long(tmp_path, snapshots, gap, marker=False)
    got = values(tmp_path)
    assert sorted(got) == sorted(
        [
            b"long-0",
            b"long-1",
            b"long-2",
            *(b"gap%d-%d" % (g, i) for g in range(gap) for i in range(3)),
        ]
    )
    assert cut == 3 * (1 + gap)
    # the snapshot says the transaction began before the tail: the tail's logs are read
    assert plan_log_reads(tmp_path) == LOOKAHEAD_SEGMENTS + 1
