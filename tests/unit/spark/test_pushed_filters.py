"""Pushed-down filters only prune: a read with ``df.where(...)`` returns the rows of the read
without it that pass the filter (Spark evaluates the filter again). The timestamp boundaries
(startingTimestamp / endingTimestamp: the first record at or above the timestamp, in offset
order) must not move when an ``offset`` filter starts the read further on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.segment_reader import read_split

T0 = 1_700_000_000_000


def out_of_order(root: Path) -> None:
    """Offsets 0-9 at T0+0..9; 10 at T0+100; 11-19 at T0+1 (batches 11-14 and 15-19);
    20-29 at T0+2. Three segments: 0-9, 10-19, 20-29. CreateTime from clocks that disagree."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "", "t", 1)
    w = PartitionWriter(store, "", "t", 0)
    w.append([(b"k", b"v%d" % i, (), T0 + i) for i in range(10)])
    w.roll()
    w.append([(b"k", b"v10", (), T0 + 100)])
    w.append([(b"k", b"v", (), T0 + 1)] * 4)
    w.append([(b"k", b"v", (), T0 + 1)] * 5)
    w.roll()
    w.append([(b"k", b"v", (), T0 + 2)] * 10)
    w.roll()


def read(root: Path, pushed: Pushed, **options: str) -> list[int]:
    bucket = open_bucket(f"file://{root}")
    opts = ReadOptions.parse({"path": f"file://{root}", "topic": "t", **options})
    return sorted(
        o
        for split in plan(bucket, opts, pushed)
        for batch in read_split(bucket, split)
        for o in batch.column("offset").to_pylist()
    )


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("startingTimestamp", list(range(10, 30))),  # the first record at T0+50 or later is 10
        ("endingTimestamp", list(range(10))),  # ... and the read stops before it
    ],
)
@pytest.mark.parametrize("low", [0, 11, 15, 20, 25])
def test_an_offset_filter_does_not_move_a_timestamp_boundary(
    tmp_path: Path, option: str, expected: list[int], low: int
) -> None:
    out_of_order(tmp_path)
    assert read(tmp_path, Pushed(), **{option: str(T0 + 50)}) == expected
    rows = read(tmp_path, Pushed(offset_low=low), **{option: str(T0 + 50)})
    assert [o for o in rows if o >= low] == [o for o in expected if o >= low]
