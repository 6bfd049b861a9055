"""layout.py keys, manifest JSON, remote index lookups against references."""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import asdict, fields, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiered_mq.broker.handlers._common import error_code
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import (
    ManifestFormatError,
    PartitionManifest,
    RemoteSegment,
    SegmentState,
    TopicManifest,
    parse_partition_manifest,
    parse_topic_manifest,
)
from tiered_mq.cold.remote_index import OffsetIndexView, SegmentSummary, TimeIndexView
from tiered_mq.errors import KafkaStorageError


def test_keys_exactly_as_designed() -> None:
    assert (
        layout.segment_key("p/q", "orders", 3, 42, 7, "abc123", "log")
        == "p/q/topics/orders/3/00000000000000000042-7-abc123.log"
    )
    assert layout.manifest_key("p", "orders", 3) == "p/topics/orders/3/manifest.json"
    assert layout.topic_manifest_key("", "orders") == "topics/orders/topic.json"
    with pytest.raises(ValueError):
        layout.segment_key("p", "t", 0, 0, 0, "u", "deleted")


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text("abcXYZ09._-", min_size=1, max_size=20),
    st.integers(0, 10_000),
    st.integers(0, 2**62),
    st.integers(0, 2**31 - 1),
    st.text("0123456789abcdef", min_size=1, max_size=32),
    st.sampled_from(layout.SEGMENT_SUFFIXES),
)
def test_segment_key_round_trip(
    topic: str, partition: int, base: int, epoch: int, upload: str, suffix: str
) -> None:
    key = layout.segment_key("pre", topic, partition, base, epoch, upload, suffix)
    assert layout.parse_key("pre", key) == layout.ParsedKey(
        "segment", topic, partition, base, epoch, upload, suffix
    )


def test_parse_other_keys() -> None:
    assert layout.parse_key("p", "p/topics/t/topic.json") == layout.ParsedKey("topic", "t")
    assert layout.parse_key("p", "p/topics/t/0/manifest.json") == layout.ParsedKey(
        "manifest", "t", 0
    )
    for junk in ("p/topics/t/0/x.log", "q/topics/t/0/manifest.json", "p/topics/t/x/manifest.json"):
        assert layout.parse_key("p", junk) is None


def _segment(
    base: int, end: int, state: SegmentState = SegmentState.COPY_FINISHED
) -> RemoteSegment:
    return RemoteSegment(
        base_offset=base,
        end_offset=end,
        first_timestamp=base * 10,
        max_timestamp=end * 10,
        size_bytes=100,
        record_count=end - base + 1,
        leader_epochs=[(0, base)],
        upload_id=f"u{base}",
        uploader_epoch=0,
        objects={"log": f"k{base}.log", "index": f"k{base}.index", "snapshot": None},
        crc32c=1234,
        state=state,
    )


def test_manifest_json_round_trip_and_queries() -> None:
    m = PartitionManifest("t", 2, leader_epoch=5, log_start_offset=10)
    for s in (_segment(0, 9), _segment(10, 19), _segment(20, 29, SegmentState.COPY_STARTED)):
        m.upsert(s)
    doc = json.loads(m.to_json())
    assert doc["version"] == 1
    assert doc["segments"][0]["state"] == "COPY_FINISHED"
    again = parse_partition_manifest(m.to_json())
    assert again == m
    assert [s.base_offset for s in again.readable_segments()] == [10]
    assert again.segment_for_offset(5) is None  # below log start
    found = again.segment_for_offset(15)
    assert found is not None and found.base_offset == 10
    assert again.segment_for_offset(25) is None  # copy not finished
    assert (again.end_offset(), again.remote_log_start_offset()) == (19, 10)


def test_from_summary_copies_every_summary_field() -> None:
    summary = SegmentSummary(  # distinct values, so a field copied into another one shows
        base_offset=100,
        end_offset=199,
        first_timestamp=1_000,
        max_timestamp=2_000,
        record_count=90,
        leader_epochs=[(3, 100), (4, 150)],
        crc32c=0xDEADBEEF,
        size_bytes=4096,
    )
    objects: dict[str, str | None] = {"log": "k.log", "index": "k.index", "snapshot": None}
    seg = RemoteSegment.from_summary(summary, upload_id="u1", uploader_epoch=4, objects=objects)
    assert {f.name: getattr(seg, f.name) for f in fields(SegmentSummary)} == asdict(summary)
    assert (seg.upload_id, seg.uploader_epoch, seg.objects) == ("u1", 4, objects)
    assert (seg.state, seg.state_ms) == (SegmentState.COPY_STARTED, 0)
    done = RemoteSegment.from_summary(
        summary,
        upload_id="u2",
        uploader_epoch=5,
        objects=objects,
        state=SegmentState.COPY_FINISHED,
        state_ms=77,
    )
    assert (done.state, done.state_ms, done.upload_id) == (SegmentState.COPY_FINISHED, 77, "u2")
    assert RemoteSegment.from_dict(done.to_dict()) == done


def test_state_machine() -> None:
    s = _segment(0, 9, SegmentState.COPY_STARTED)
    s = s.with_state(SegmentState.COPY_FINISHED, 1)
    with pytest.raises(ValueError, match="illegal"):
        s.with_state(SegmentState.COPY_STARTED, 2)
    s = s.with_state(SegmentState.DELETE_STARTED, 3)
    m = PartitionManifest("t", 0, segments=[s])
    m.upsert(s.with_state(SegmentState.DELETE_FINISHED, 4))
    assert m.segments == []


def test_bad_manifests() -> None:
    with pytest.raises(ManifestFormatError, match="version"):
        parse_partition_manifest(b'{"version": 9}')
    with pytest.raises(ManifestFormatError):
        parse_partition_manifest(b"not json")
    with pytest.raises(ManifestFormatError, match="malformed"):
        parse_partition_manifest(b'{"version": 1, "topic": "t"}')
    with pytest.raises(ManifestFormatError):
        parse_partition_manifest(b"")  # what a PUT cut short once left behind
    tm = TopicManifest("t", 3, {"retention.ms": "-1"})
    assert parse_topic_manifest(tm.to_json()) == tm
    # a fetch that needs an unreadable manifest answers KAFKA_STORAGE_ERROR, not UNKNOWN (-1)
    assert error_code(ManifestFormatError("not json")) == KafkaStorageError.errno


def test_a_copy_is_mutated_without_touching_the_original() -> None:
    m = PartitionManifest("t", 2, leader_epoch=5)
    m.upsert(_segment(0, 9))
    before = m.to_json()
    c = m.copy()
    c.upsert(_segment(10, 19))
    c.upsert(_segment(0, 9, SegmentState.DELETE_FINISHED))
    c.log_start_offset = 10
    assert m.to_json() == before
    assert [s.base_offset for s in c.segments] == [10]


_ENTRIES = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 15), st.sampled_from(list(SegmentState))),
    max_size=12,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ENTRIES, st.integers(0, 70))
def test_manifest_queries_match_a_scan_of_every_entry(
    entries: list[tuple[int, int, SegmentState]], log_start: int
) -> None:
    """The bisected queries answer as a plain scan over the entries does, with overlapping
    entries (a segment uploaded again), gaps, unfinished states and any log start offset;
    and again after the manifest changes (the index follows the new version)."""
    m = PartitionManifest("t", 0, log_start_offset=log_start)
    for i, (base, length, state) in enumerate(entries):
        m.upsert(replace(_segment(base, base + length, state), upload_id=f"u{i}"))
    for version in (m, _changed(m)):
        readable = [
            s
            for s in version.segments
            if s.state == SegmentState.COPY_FINISHED and s.end_offset >= version.log_start_offset
        ]
        assert version.readable_segments() == readable
        for offset in range(80):
            holding = [s for s in readable if s.base_offset <= offset <= s.end_offset]
            expected = holding[-1] if holding and offset >= version.log_start_offset else None
            assert version.segment_for_offset(offset) == expected
            after = [s for s in readable if s.end_offset > offset]
            assert version.segment_after(offset) == (after[0] if after else None)
        finished = [s.end_offset for s in version.segments if s.state == SegmentState.COPY_FINISHED]
        assert version.end_offset() == max(finished, default=-1)
        assert version.size_bytes() == sum(s.size_bytes for s in readable)
        assert parse_partition_manifest(version.to_json()) == version


def _changed(m: PartitionManifest) -> PartitionManifest:
    """``m`` after queries built its index: a later segment added and the log start raised."""
    m.readable_segments()
    c = m.copy()
    c.upsert(_segment(40, 75))
    c.log_start_offset += 5
    return c


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 1000), min_size=0, max_size=50), st.integers(0, 60_000))
def test_offset_index_lookup_matches_reference(gaps: list[int], target: int) -> None:
    base = 1000
    rel, pos = [], []
    r = p = 0
    for g in gaps:
        r += g
        p += g * 7
        rel.append(r)
        pos.append(p)
    data = b"".join(
        x.to_bytes(4, "big") + y.to_bytes(4, "big") for x, y in zip(rel, pos, strict=True)
    )
    view = OffsetIndexView.parse(base, data)
    i = bisect_right(rel, target - base) - 1
    assert view.lookup(target) == (pos[i] if i >= 0 else 0)


def test_time_index_lookup_and_garbage() -> None:
    entries = [(100, 4), (200, 9), (300, 15)]
    data = b"".join(ts.to_bytes(8, "big") + rel.to_bytes(4, "big") for ts, rel in entries)
    view = TimeIndexView.parse(50, data)
    assert view.lookup(50) == 50
    assert view.lookup(100) == 50
    assert view.lookup(101) == 55
    assert view.lookup(10_000) == 66
    # Columns not increasing: rejected, so lookups fall back to the segment start.
    bad = TimeIndexView.parse(50, data[12:24] + data[:12])
    assert bad.lookup(10_000) == 50
