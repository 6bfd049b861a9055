"""What a bucket read does when the bucket is not what its manifests say: an object shorter
than the manifest's size, a manifest of a newer format, options naming partitions that do not
exist, offsets that retention deleted (``failOnDataLoss``). Planner and reader are called
directly on a file:// bucket written as the uploader writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import ManifestFormatError
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import LogCorruptionError, ObjectNotFoundError
from tiered_mq.record.batch import iter_batches
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import DataLossError, Pushed, plan
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


def three_segments(root: Path, log_start: int = 0) -> None:
    """Topic ``t``, two partitions of three 10-record segments; the manifests' log start
    offset set to ``log_start`` (retention deleted what is below)."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "", "t", 2)
    for p in range(2):
        w = PartitionWriter(store, "", "t", p)
        for _ in range(3):
            w.append([(b"k", b"v%d" % i, (), T0 + i) for i in range(10)])
            w.roll()
        assert w.manifest is not None
        w.manifest.log_start_offset = log_start
        store.put(layout.manifest_key("", "t", p), w.manifest.to_json())


def test_starting_offset_below_the_log_start_is_data_loss(tmp_path: Path) -> None:
    three_segments(tmp_path, log_start=10)
    below = '{"t": {"0": 3, "1": -2}}'
    with pytest.raises(DataLossError, match="t-0 is 3, but the bucket's log start offset is 10"):
        offsets(tmp_path, startingOffsets=below)
    with pytest.raises(DataLossError, match="failOnDataLoss=false"):
        offsets(tmp_path, startingOffsets=below, failOnDataLoss="TRUE")
    # as Spark's Kafka source: false reads from the log start; earliest is never data loss
    lenient = offsets(tmp_path, startingOffsets=below, failOnDataLoss="false")
    assert sorted(lenient) == sorted(list(range(10, 30)) * 2)
    earliest = '{"t": {"0": -2, "1": -2}}'
    assert sorted(offsets(tmp_path, startingOffsets=earliest)) == sorted(lenient)
    at_start = '{"t": {"0": 10, "1": 10}}'
    assert sorted(offsets(tmp_path, startingOffsets=at_start)) == sorted(lenient)


def test_segment_deleted_after_planning(tmp_path: Path) -> None:
    three_segments(tmp_path)
    bucket = open_bucket(f"file://{tmp_path}")
    for fail in ("true", "false"):
        opts = ReadOptions.parse(
            {"path": f"file://{tmp_path}", "topic": "t", "failOnDataLoss": fail}
        )
        splits = plan(bucket, opts, Pushed())
        deleted = tmp_path / splits[1].log_key
        kept = deleted.read_bytes()
        deleted.unlink()  # retention, between planning and the task
        try:
            if fail == "true":
                with pytest.raises(ObjectNotFoundError, match="failOnDataLoss=false") as info:
                    [b for s in splits for b in read_split(bucket, s)]
                assert str(deleted) in str(info.value)
            else:
                rows = [o for s in splits for b in read_split(bucket, s)
                        for o in b.column("offset").to_pylist()]  # fmt: skip
                assert len(rows) == 50 and len(set(rows)) == 30
        finally:
            deleted.write_bytes(kept)


@pytest.mark.parametrize(
    "option",
    ["startingOffsets", "endingOffsets", "startingOffsetsByTimestamp", "endingOffsetsByTimestamp"],
)
def test_offsets_json_names_exactly_the_partitions_read(tmp_path: Path, option: str) -> None:
    """As Spark's KafkaOffsetReaderAdmin: a partition the topic does not have, or one of its
    partitions left out (which the old reader gave the default), fails the read."""
    three_segments(tmp_path)
    with pytest.raises(ValueError, match=f"If {option} contains specific offsets, you must "
                       r"specify all TopicPartitions.*not read: \{t-2\}"):  # fmt: skip
        offsets(tmp_path, **{option: '{"t": {"0": 5, "1": 5, "2": 5}}'})
    with pytest.raises(ValueError, match=r"Assigned: \{t-0, t-1\} \(missing: \{t-0\}"):
        offsets(tmp_path, **{option: '{"t": {"1": 5}}'})
    offsets(tmp_path, **{option: '{"t": {"0": 5, "1": 5}}'})  # every partition: fine


@pytest.mark.parametrize("manifest", ["topic", "partition"])
def test_manifest_of_a_newer_format_names_the_object(tmp_path: Path, manifest: str) -> None:
    three_segments(tmp_path)
    key = (
        layout.topic_manifest_key("", "t")
        if manifest == "topic"
        else layout.manifest_key("", "t", 1)
    )
    doc = json.loads((tmp_path / key).read_bytes())
    doc["version"] = 2
    (tmp_path / key).write_text(json.dumps(doc))
    with pytest.raises(ManifestFormatError) as info:
        offsets(tmp_path)
    assert str(tmp_path / key) in str(info.value)
    assert "unsupported manifest version 2 (this tiered-mq reads manifest version 1)" in str(
        info.value
    )
