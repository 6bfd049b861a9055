"""What a bucket read does when the bucket is not what its manifests say: an object shorter
than the manifest's size, a manifest of a newer format, options naming partitions that do not
exist, offsets that retention deleted (``failOnDataLoss``). Planner and reader are called
directly on a file:// bucket written as the uploader writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import LogCorruptionError
from tiered_mq.record.batch import iter_batches
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.segment_reader import read_split

T0 = 1_700_000_000_000


def one_segment(root: Path, batches: int = 10) -> Path:
    """Topic ``t``, one partition, one segment of ``batches`` x 10 records; its .log path."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "", "t", 1)
    w = PartitionWriter(store, "", "t", 0, index_interval=50)
    for _ in range(batches):
        w.append([(b"k", b"v%d" % i, (), T0 + i) for i in range(10)])
    w.roll()
    return next((root / "topics/t/0").glob("*.log"))


def offsets(root: Path, **options: str) -> list[int]:
    bucket = open_bucket(f"file://{root}")
    opts = ReadOptions.parse({"path": f"file://{root}", "topic": "t", **options})
    return [
        o
        for split in plan(bucket, opts, Pushed())
        for batch in read_split(bucket, split)
        for o in batch.column("offset").to_pylist()
    ]


def test_object_cut_at_a_batch_boundary_fails_a_ranged_read(tmp_path: Path) -> None:
    """A segment larger than maxBytesPerSplit is read in byte ranges, without the object's
    CRC: an object that lost its last batches must still fail, not return fewer records."""
    log = one_segment(tmp_path)
    assert offsets(tmp_path, maxBytesPerSplit="300") == list(range(100))
    data = log.read_bytes()
    last_two = [pos for pos, _ in iter_batches(data, validate=False)][-2]
    log.write_bytes(data[:last_two])  # what is left is a valid log of 80 records
    with pytest.raises(LogCorruptionError, match="ends early") as info:
        offsets(tmp_path, maxBytesPerSplit="300")
    assert str(log) in str(info.value)
    assert f"the manifest says the object is {len(data)} bytes" in str(info.value)
