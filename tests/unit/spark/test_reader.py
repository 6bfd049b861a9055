"""Planner + segment reader on a file:// bucket, without Spark (the driver and executor halves
called directly), counting the object reads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, TopicManifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import LogCorruptionError
from tiered_mq.spark.bucket import Bucket, BucketURL, open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, SegmentSplit, plan
from tiered_mq.spark.segment_reader import read_split

T0 = 1_700_000_000_000


class CountingBucket:
    """A Bucket recording every object read (key, bytes)."""

    def __init__(self, inner: Bucket) -> None:
        self.inner = inner
        self.url: BucketURL = inner.url
        self.reads: list[tuple[str, int]] = []

    def get(self, key: str) -> bytes:
        data = self.inner.get(key)
        self.reads.append((key, len(data)))
        return data

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        data = self.inner.get_range(key, start, end_inclusive)
        self.reads.append((key, len(data)))
        return data

    def list_dirs(self, prefix: str) -> list[str]:
        return self.inner.list_dirs(prefix)

    def log_reads(self) -> int:
        return sum(1 for key, _ in self.reads if key.endswith(".log"))

    def log_bytes(self) -> int:
        return sum(n for key, n in self.reads if key.endswith(".log"))


def build(root: Path, partitions: int = 2, segments: int = 4, codec: int = 0) -> dict[str, Any]:
    """``segments`` segments of 5 batches x 20 records per partition; timestamps T0 + offset."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "pfx", "orders", partitions)
    expected: dict[int, list[tuple[int, int, bytes, bytes]]] = {}
    for p in range(partitions):
        w = PartitionWriter(store, "pfx", "orders", p, index_interval=200)
        for _ in range(segments):
            for _ in range(5):
                base = w.next_offset
                rows = [
                    (b"k%d" % (base + i), b"v%d-%d" % (p, base + i), (), T0 + base + i)
                    for i in range(20)
                ]
                w.append(rows, compression=codec)
                expected.setdefault(p, []).extend(
                    (base + i, T0 + base + i, r[0], r[1]) for i, r in enumerate(rows)
                )
            w.roll()
    return {"url": f"file://{root}?prefix=pfx", "expected": expected}


def read_all(
    bucket: CountingBucket, opts: dict[str, str], pushed: Pushed | None = None
) -> tuple[list[SegmentSplit], list[tuple[int, int, int, int, bytes | None, bytes | None]]]:
    options = ReadOptions.parse({"topic": "orders", **opts})
    splits = plan(bucket, options, pushed or Pushed())
    rows = []
    for split in splits:
        for batch in read_split(bucket, split):
            d = batch.to_pydict()
            for i in range(batch.num_rows):
                rows.append(
                    (
                        d["partition"][i],
                        d["offset"][i],
                        round(d["timestamp"][i].timestamp() * 1000),
                        d["timestampType"][i],
                        d["key"][i],
                        d["value"][i],
                    )
                )
    return splits, sorted(rows)


def flat(expected: dict[int, list[tuple[int, int, bytes, bytes]]], keep: Any = None) -> list[Any]:
    return sorted(
        (p, o, ts, 0, k, v)
        for p, rows in expected.items()
        for (o, ts, k, v) in rows
        if keep is None or keep(p, o, ts)
    )


@pytest.fixture
def bucket_and_data(tmp_path: Path) -> tuple[CountingBucket, dict[str, Any]]:
    built = build(tmp_path)
    return CountingBucket(open_bucket(built["url"])), built


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_reads_every_record_of_every_codec(tmp_path: Path, codec: int) -> None:
    built = build(tmp_path, partitions=1, segments=2, codec=codec)
    bucket = CountingBucket(open_bucket(built["url"]))
    splits, rows = read_all(bucket, {"path": built["url"]})
    assert len(splits) == 2
    assert rows == flat(built["expected"])


def test_offset_bounds_read_fewer_objects(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    _, everything = read_all(bucket, {"path": built["url"]})
    all_reads = bucket.log_reads()
    assert everything == flat(built["expected"]) and all_reads == 8
    bucket.reads.clear()
    _, rows = read_all(
        bucket,
        {
            "path": built["url"],
            "startingOffsets": '{"orders": {"0": 150, "1": -2}}',
            "endingOffsets": '{"orders": {"0": 210, "1": 30}}',
        },
    )
    expected = flat(built["expected"], lambda p, o, ts: (150 <= o < 210) if p == 0 else o < 30)
    assert rows == expected
    assert bucket.log_reads() == 3  # p0: segments 1 and 2, p1: segment 0


def test_pushed_filters_prune_partitions_and_offsets(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    pushed = Pushed(partitions=frozenset({1}), offset_low=310)
    _, rows = read_all(bucket, {"path": built["url"]}, pushed)
    assert rows == flat(built["expected"], lambda p, o, ts: p == 1 and o >= 310)
    assert bucket.log_reads() == 1


def test_timestamp_bounds(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    _, rows = read_all(
        bucket,
        {
            "path": built["url"],
            "startingTimestamp": str(T0 + 105),
            "endingTimestamp": str(T0 + 250),
        },
    )
    assert rows == flat(built["expected"], lambda p, o, ts: T0 + 105 <= ts < T0 + 250)
    assert bucket.log_reads() == 4  # segments 1 and 2 of both partitions


def test_pushed_timestamp_lower_bound_skips_segments(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    _, rows = read_all(bucket, {"path": built["url"]}, Pushed(min_timestamp_us=(T0 + 300) * 1000))
    assert bucket.log_reads() == 2
    # Only whole batches below the bound are skipped: Spark applies the filter to the rest.
    assert {o for _, o, *_ in rows} >= set(range(300, 400))


def test_byte_range_splits_cover_each_offset_once(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    splits, rows = read_all(bucket, {"path": built["url"], "maxBytesPerSplit": "600"})
    assert len(splits) > 8
    assert rows == flat(built["expected"])
    bucket.reads.clear()
    splits, rows = read_all(
        bucket,
        {
            "path": built["url"],
            "maxBytesPerSplit": "600",
            "startingOffsets": '{"orders": {"0": 370, "1": 370}}',
        },
    )
    assert rows == flat(built["expected"], lambda p, o, ts: o >= 370)
    whole_segment = max(s.size_bytes for s in splits)
    # Per partition only the last segment's batches from the one holding 370 on: 3 of 5.
    assert 2 * whole_segment * 0.55 < bucket.log_bytes() < 2 * whole_segment * 0.65


def test_topic_pattern_and_unknown_topic(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    options = ReadOptions.parse({"path": built["url"], "topicPattern": "ord.*"})
    assert {s.topic for s in plan(bucket, options, Pushed())} == {"orders"}
    options = ReadOptions.parse({"path": built["url"], "topicPattern": "x.*"})
    assert plan(bucket, options, Pushed()) == []


def test_overlapping_segments_read_once(tmp_path: Path) -> None:
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0)
    for _ in range(4):
        w.append([(b"k", b"v", (), T0)] * 10)
    w.roll(epoch=0)  # offsets 0-39
    w.next_offset = 20  # a new leader re-uploads from 20 (same data)
    for _ in range(4):
        w.append([(b"k", b"v", (), T0)] * 10)
    w.roll(epoch=1)  # offsets 20-59
    bucket = CountingBucket(open_bucket(f"file://{tmp_path}"))
    options = ReadOptions.parse({"path": f"file://{tmp_path}", "topic": "t"})
    offsets = [o for s in plan(bucket, options, Pushed()) for b in read_split(bucket, s)
               for o in b.column("offset").to_pylist()]  # fmt: skip
    assert sorted(offsets) == list(range(60))


def test_corrupt_batch_names_the_object(bucket_and_data: Any, tmp_path: Path) -> None:
    bucket, built = bucket_and_data
    log = sorted((tmp_path / "pfx/topics/orders/1").glob("*.log"))[2]
    data = bytearray(log.read_bytes())
    data[400] ^= 0xFF  # inside a batch's records: its CRC no longer matches
    log.write_bytes(bytes(data))
    options = ReadOptions.parse({"path": built["url"], "topic": "orders"})
    splits = [s for s in plan(bucket, options, Pushed()) if s.log_key.endswith(log.name)]
    with pytest.raises(LogCorruptionError) as info:
        list(read_split(bucket, splits[0]))
    assert log.name in str(info.value)
    assert "CRC-32C of the object" in str(info.value)
    # Without the manifest's whole-object CRC, the batch's own CRC-32C catches it.
    unchecked = replace(splits[0], object_crc32c=None)
    with pytest.raises(LogCorruptionError, match="CRC mismatch") as info:
        list(read_split(bucket, unchecked))
    assert log.name in str(info.value)
    ranged = replace(splits[0], start_position=0, end_position=splits[0].size_bytes)
    with pytest.raises(LogCorruptionError, match="CRC mismatch") as info:
        list(read_split(bucket, ranged))
    assert log.name in str(info.value)


def test_rows_come_as_arrow_batches_of_the_kafka_schema(bucket_and_data: Any) -> None:
    bucket, built = bucket_and_data
    options = ReadOptions.parse({"path": built["url"], "topic": "orders"})
    split = plan(bucket, options, Pushed())[0]
    batches = list(read_split(bucket, split))
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    assert batches[0].schema.field("timestamp").type == pa.timestamp("us", tz="UTC")


def test_start_timestamp_keeps_later_log_append_time_batches(tmp_path: Path) -> None:
    """After the first record at or past the start timestamp every record counts, even a
    LogAppendTime batch stamped earlier (Kafka's offsetsForTimes semantics)."""
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0)
    w.append([(b"k", b"early", (), T0)] * 3)
    w.append([(b"k", b"start", (), T0 + 100)] * 3)
    w.append([(b"k", b"stamped", (), T0)] * 3, log_append_time=True, append_time=T0 + 1)
    w.roll()
    bucket = CountingBucket(open_bucket(f"file://{tmp_path}"))
    options = ReadOptions.parse(
        {"path": f"file://{tmp_path}", "topic": "t", "startingTimestamp": str(T0 + 50)}
    )
    values = [v for s in plan(bucket, options, Pushed()) for b in read_split(bucket, s)
              for v in b.column("value").to_pylist()]  # fmt: skip
    assert values == [b"start"] * 3 + [b"stamped"] * 3


@pytest.mark.parametrize(
    ("start", "end"), [(105, 250), (105, 130), (0, 37), (333, None), (None, 3), (150, 150)]
)
def test_timestamp_bounds_with_byte_ranges(
    bucket_and_data: Any, start: int | None, end: int | None
) -> None:
    """Boundary segments are split too: the time index picks the ranges holding the bounds."""
    bucket, built = bucket_and_data
    opts = {"path": built["url"], "maxBytesPerSplit": "300"}
    if start is not None:
        opts["startingTimestamp"] = str(T0 + start)
    if end is not None:
        opts["endingTimestamp"] = str(T0 + end)
    _, rows = read_all(bucket, opts)
    lo, hi = T0 + (start or 0), T0 + (10**6 if end is None else end)
    assert rows == flat(built["expected"], lambda p, o, ts: lo <= ts < hi)
    if start == 105 and end == 130:  # inside one segment: a few ranges, not whole segments
        assert bucket.log_bytes() < 2 * 2005 * 0.7


@pytest.mark.parametrize("seed", range(6))
def test_timestamp_bounds_match_offsets_for_times(tmp_path: Path, seed: int) -> None:
    """Out-of-order timestamps: rows run from the first record at or past the start timestamp
    to before the first at or past the end one (Kafka's offsetsForTimes), split or not."""
    import random

    rng = random.Random(seed)
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "t", 0, index_interval=150)
    stamps: list[int] = []
    for _ in range(4):
        for _ in range(6):
            rows = [
                (None, b"v", (), T0 + len(stamps) * 3 + rng.randrange(-40, 40)) for _ in range(8)
            ]
            stamps += [r[3] for r in rows]
            w.append(rows)
        w.roll()
    start = T0 + rng.randrange(0, len(stamps) * 3)
    end = start + rng.randrange(0, 200)
    first = next((i for i, ts in enumerate(stamps) if ts >= start), len(stamps))
    stop = next((i for i, ts in enumerate(stamps) if ts >= end), len(stamps))
    expected = list(range(first, max(first, stop)))
    bucket = CountingBucket(open_bucket(f"file://{tmp_path}"))
    for split_bytes in ("100000", "200"):
        opts = ReadOptions.parse(
            {
                "path": f"file://{tmp_path}",
                "topic": "t",
                "startingTimestamp": str(start),
                "endingTimestamp": str(end),
                "maxBytesPerSplit": split_bytes,
            }
        )
        offsets = sorted(o for s in plan(bucket, opts, Pushed()) for b in read_split(bucket, s)
                         for o in b.column("offset").to_pylist())  # fmt: skip
        assert offsets == expected, (split_bytes, start, end)


def test_a_deleted_topics_manifest_is_not_read(tmp_path: Path) -> None:
    """topic.json names the live incarnation: a partition manifest of another topic id (a
    deleted topic of the same name whose objects are still there) gives no split."""
    store = open_sync_store(f"file://{tmp_path}")
    old, new = "a" * 32, "b" * 32
    for p, topic_id in ((0, new), (1, old)):
        w = PartitionWriter(store, "", "t", p)
        w.manifest = PartitionManifest("t", p, topic_id=topic_id)
        w.append([(b"k", b"v", (), T0)])
        w.roll()
    store.put(layout.topic_manifest_key("", "t"), TopicManifest("t", 2, topic_id=new).to_json())
    bucket = CountingBucket(open_bucket(f"file://{tmp_path}"))
    options = ReadOptions.parse({"path": f"file://{tmp_path}", "topic": "t"})
    splits = plan(bucket, options, Pushed())
    assert [s.partition for s in splits] == [0]
