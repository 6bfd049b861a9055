"""Timestamp bounds when the log start (moved by DeleteRecords) falls inside a batch, and a
deleted record below it carries a late timestamp: Kafka's ListOffsets searches from the log
start on, so that record counts for neither startingTimestamp nor endingTimestamp.

Found by the Spark bug hunt: the executor took the deleted record as the first one at or after
the start timestamp and returned every record from the log start on (2-19 instead of 15-19),
and an end timestamp cut the read at it (nothing returned instead of 2-14). Planner + reader on a
file:// bucket, without Spark; the expected rows are computed the way Kafka resolves offsets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tiered_mq.cold import layout
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, plan
from tiered_mq.spark.segment_reader import read_split
from tiered_mq.spark.timestamps import OffsetRangeError

T0 = 1_700_000_000_000
LOG_START = 2  # inside the first batch (offsets 0-4)
LATE = 1  # deleted, stamped T0 + 1000
OFFSETS = range(20)  # two segments of two 5-record batches


def stamp(offset: int) -> int:
    """T0 + offset, +100 from the second segment on, +400 more from offset 15; offset LATE is
    stamped T0 + 1000 (a producer clock ahead)."""
    if offset == LATE:
        return T0 + 1000
    return T0 + offset + (100 if offset >= 10 else 0) + (400 if offset >= 15 else 0)


def first_at(timestamp: int) -> int:
    """Kafka's ListOffsets by timestamp: the first offset from the log start on whose record
    has a timestamp at or after it (the log end when none has)."""
    return next((o for o in OFFSETS if o >= LOG_START and stamp(o) >= timestamp), len(OFFSETS))


@pytest.fixture
def url(tmp_path: Path) -> str:
    store = open_sync_store(f"file://{tmp_path}")
    write_topic_manifest(store, "", "t", 1)
    w = PartitionWriter(store, "", "t", 0, index_interval=1)
    for _ in range(2):
        for _ in range(2):
            base = w.next_offset
            w.append([(b"k", b"v%d" % (base + i), (), stamp(base + i)) for i in range(5)])
        w.roll()
    assert w.manifest is not None
    w.manifest.log_start_offset = LOG_START  # DeleteRecords up to offset 2
    store.put(layout.manifest_key("", "t", 0), w.manifest.to_json())
    return f"file://{tmp_path}"


def read(url: str, **options: str) -> list[int]:
    bucket = open_bucket(url)
    opts = ReadOptions.parse({"path": url, "topic": "t", **options})
    out: list[int] = []
    for split in plan(bucket, opts, Pushed()):
        for batch in read_split(bucket, split):
            out += batch.column("offset").to_pylist()
    return sorted(out)


def by_partition(timestamp: int) -> str:
    return json.dumps({"t": {"0": timestamp}})


@pytest.mark.parametrize("ts", [T0 + 500, T0 + 105])
def test_start_timestamp_ignores_a_deleted_late_record(url: str, ts: int) -> None:
    expected = list(range(first_at(ts), len(OFFSETS)))
    assert expected and expected[0] > LOG_START
    assert read(url, startingTimestamp=str(ts)) == expected
    assert read(url, startingOffsetsByTimestamp=by_partition(ts)) == expected


@pytest.mark.parametrize("ts", [T0 + 500, T0 + 105])
def test_end_timestamp_ignores_a_deleted_late_record(url: str, ts: int) -> None:
    expected = list(range(LOG_START, first_at(ts)))
    assert read(url, endingTimestamp=str(ts)) == expected
    assert read(url, endingOffsetsByTimestamp=by_partition(ts)) == expected


def test_both_timestamps_ignore_a_deleted_late_record(url: str) -> None:
    start, end = T0 + 105, T0 + 500
    expected = list(range(first_at(start), first_at(end)))
    assert expected == list(range(10, 15))
    assert read(url, startingTimestamp=str(start), endingTimestamp=str(end)) == expected


def test_a_start_timestamp_only_a_deleted_record_reaches_matches_nothing(url: str) -> None:
    """Only the deleted record reaches T0 + 1000: no offset matches, as Spark's Kafka source
    fails (startingOffsetsByTimestampStrategy=error) or reads nothing (latest)."""
    assert first_at(T0 + 1000) == len(OFFSETS)
    with pytest.raises(OffsetRangeError, match="No offset matched"):
        read(url, startingTimestamp=str(T0 + 1000))
    latest = read(
        url, startingTimestamp=str(T0 + 1000), startingOffsetsByTimestampStrategy="latest"
    )
    assert latest == []
