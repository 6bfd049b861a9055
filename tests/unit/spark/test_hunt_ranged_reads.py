"""A read whose offset range starts or ends inside a segment fetches about the bytes it needs
(one ranged GET bounded by the segment's ``.index``), not the whole ``.log`` object: planner +
reader on a file:// bucket, without Spark, counting the bytes read.

Found by the Spark bug hunt: a segment no larger than maxBytesPerSplit (128 MiB by default) was
read whole whatever the range, so one record from the end of a 100 MiB segment read 100 MiB.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tests.unit.spark.test_reader import CountingBucket
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.segment_reader import read_split

T0 = 1_700_000_000_000
BATCHES = 200  # per segment, 20 records of ~110 bytes each
PER_BATCH = 20
PRODUCER = 7


def build(root: Path, aborted_at: int | None = None) -> tuple[str, list[int]]:
    """Topic ``t``, one partition, two segments of BATCHES batches (offsets 0-3999 and
    4000-7999), an index entry about every 4 KiB. With ``aborted_at``, the batch starting there
    belongs to a transaction whose ABORT marker comes 50 batches later in the same segment (no
    ``.txnindex``: the reader finds the marker by reading on). Returns the URL and the sizes of
    the two ``.log`` objects."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "", "t", 1)
    w = PartitionWriter(store, "", "t", 0)
    sizes = []
    pending = None
    for _ in range(2):
        for _ in range(BATCHES):
            base = w.next_offset
            rows = [(b"k", b"v%d" % (base + i) + b"x" * 100, (), T0 + base + i) for i in range(20)]
            if base == aborted_at:
                w.append(rows, producer_id=PRODUCER, producer_epoch=0, is_transactional=True)
                pending = base
            else:
                w.append(rows)
            if pending is not None and base >= pending + 50 * PER_BATCH:
                w.control(PRODUCER, commit=False, timestamp=T0 + base, first_offset=pending)
                pending = None
        sizes.append(w.roll(with_txnindex=False).size_bytes)
    return f"file://{root}", sizes


def read(url: str, start: int, end: int, committed: bool = False) -> tuple[list[int], int]:
    bucket = CountingBucket(open_bucket(url))
    opts = ReadOptions.parse(
        {
            "path": url,
            "topic": "t",
            "startingOffsets": json.dumps({"t": {"0": start}}),
            "endingOffsets": json.dumps({"t": {"0": end}}),
            "isolation.level": "read_committed" if committed else "read_uncommitted",
        }
    )
    offsets: list[int] = []
    for split in plan(bucket, opts, Pushed()):
        for batch in read_split(bucket, split):
            offsets += batch.column("offset").to_pylist()
            values = batch.column("value").to_pylist()
            assert [v[: v.index(b"x")] for v in values] == [
                b"v%d" % o for o in batch.column("offset").to_pylist()
            ]
    return offsets, bucket.log_bytes()


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (3999, 4000),  # the last record of segment 0
        (4000, 4001),  # the first record of segment 1
        (6010, 6030),  # inside segment 1, across a batch boundary
        (3990, 4010),  # the end of one segment and the start of the next
    ],
)
def test_a_range_inside_segments_reads_only_its_bytes(tmp_path: Path, start: int, end: int) -> None:
    url, sizes = build(tmp_path)
    offsets, log_bytes = read(url, start, end)
    assert offsets == list(range(start, end))
    # a batch is ~2.3 KB and index entries ~4 KiB apart: a few KB per segment touched
    assert log_bytes < 20_000, f"read {log_bytes} bytes of .log objects of {sizes} bytes"


def test_whole_segments_are_still_read_whole(tmp_path: Path) -> None:
    url, sizes = build(tmp_path)
    offsets, log_bytes = read(url, 0, 8000)
    assert offsets == list(range(8000))
    assert log_bytes == sum(sizes)


def test_read_committed_finds_the_abort_marker_after_a_narrowed_range(tmp_path: Path) -> None:
    """The aborted transaction is the batch at 2000; its ABORT marker lies 50 batches later,
    past the end of the range read: the rest of the segment is still looked at for it."""
    url, _ = build(tmp_path, aborted_at=2000)
    committed, _ = read(url, 1990, 2030, committed=True)
    assert committed == [*range(1990, 2000), *range(2020, 2030)]  # batch 2000-2019 aborted
    uncommitted, _ = read(url, 1990, 2030)
    assert uncommitted == list(range(1990, 2030))
