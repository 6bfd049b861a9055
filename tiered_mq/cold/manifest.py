"""Partition and topic manifests: plain JSON documents, parsed here with no I/O and no asyncio
(the Spark data source imports this module on executors).

Partition manifest, ``{prefix}/topics/{topic}/{partition}/manifest.json``::

    {
      "version": 1,
      "topic": "orders", "partition": 0,
      "topic_id": "5f1c...",       # 32 hex digits: the incarnation of the topic (see below)
      "leader_epoch": 4,           # epoch of the leader that last wrote the manifest
      "log_start_offset": 0,       # first offset readable from the bucket (remote log start)
      "segments": [                # sorted by base_offset; overlapping ranges hold equal data
        {
          "base_offset": 0,        # first offset of the segment
          "end_offset": 999,       # last offset (inclusive)
          "first_timestamp": 1700000000000,   # baseTimestamp of the first batch
          "max_timestamp": 1700000005000,     # greatest batch maxTimestamp
          "size_bytes": 1048576,   # size of the .log object
          "record_count": 1000,
          "leader_epochs": [[0, 0], [3, 512]],   # [epoch, first offset of that epoch], ascending
          "upload_id": "9f2c...", "uploader_epoch": 4,
          "objects": {"log": "<key>", "index": "<key>", "timeindex": "<key>",
                      "snapshot": "<key>" | null, "txnindex": "<key>" | null},   # full bucket keys
          "crc32c": 123456789,     # CRC-32C of the whole .log object
          "state": "COPY_FINISHED",
          "state_ms": 1700000009000
        }
      ]
    }

Readers use only segments in state COPY_FINISHED with ``end_offset >= log_start_offset``.
``to_json`` writes one segment entry per line, without indentation; any JSON layout parses.

Cost: a partition kept for months can hold tens of thousands of entries. Each entry's JSON is
encoded once (entries are immutable) and reused by every later write, and the queries bisect
an index of the readable segments that is built once per manifest version, so neither an
upload nor a cold fetch pays per-entry Python work each time.

Segment state machine (Kafka's RemoteLogSegmentState)::

    COPY_STARTED ---> COPY_FINISHED ---> DELETE_STARTED ---> DELETE_FINISHED
         |                                     ^              (entry dropped from the manifest
         +-------------------------------------+               in the same write)
      (an abandoned copy: the next leader deletes its objects)

The manifest is written with a conditional put: ``put_if_absent`` the first time, then
``put_if_match`` with the ETag last read. A writer that loses (a deposed leader) gets
PreconditionFailedError and stops uploading for that partition; ``leader_epoch`` lets a new
leader refuse a manifest already written by a later epoch.

Topic manifest, ``{prefix}/topics/{topic}/topic.json``::

    {"version": 1, "topic": "orders", "topic_id": "5f1c...", "partition_count": 3,
     "configs": {"retention.ms": "604800000", ...}}

Topic ids. Keys are named by topic name (layout.py), so a topic deleted and created again
with the same name shares the key prefix with its predecessor; Kafka keys remote segments by
topic id (KIP-405's TopicIdPartition) instead. Here ``topic_id`` (the coordinator's, 32 hex
digits) says which incarnation wrote a manifest: a manifest of another topic id is *foreign*
(:func:`is_foreign`) and nothing of it is ever adopted: the broker's writer replaces it with a
fresh manifest and deletes its objects, readers see an empty partition, and the
topic deletion deletes only what carries the deleted id. ``topic_id`` was added to version 1
without a version bump: older readers ignore the field, and a manifest without it (written
before) is read as before and adopted by the live topic of its name, which stamps its id on
the next write. An incarnation writes its topic.json before its first partition manifest
(uploader.py), so a partition manifest whose topic id differs from topic.json's is of an
earlier incarnation: a scrub deletes it and the objects only it names, and Spark skips it.
"""

from __future__ import annotations

import enum
import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tiered_mq.errors import StorageError

if TYPE_CHECKING:
    from tiered_mq.cold.remote_index import SegmentSummary

VERSION = 1


class SegmentState(enum.StrEnum):
    COPY_STARTED = "COPY_STARTED"
    COPY_FINISHED = "COPY_FINISHED"
    DELETE_STARTED = "DELETE_STARTED"
    DELETE_FINISHED = "DELETE_FINISHED"


_NEXT_STATES = {
    SegmentState.COPY_STARTED: {SegmentState.COPY_FINISHED, SegmentState.DELETE_STARTED},
    SegmentState.COPY_FINISHED: {SegmentState.DELETE_STARTED},
    SegmentState.DELETE_STARTED: {SegmentState.DELETE_FINISHED},
    SegmentState.DELETE_FINISHED: set(),
}


class ManifestFormatError(StorageError, ValueError):
    """A manifest that is not valid JSON of a known version (a fetch that needs it answers
    KAFKA_STORAGE_ERROR)."""


@dataclass(frozen=True)
class RemoteSegment:
    base_offset: int
    end_offset: int
    first_timestamp: int
    max_timestamp: int
    size_bytes: int
    record_count: int
    leader_epochs: list[tuple[int, int]]
    upload_id: str
    uploader_epoch: int
    objects: dict[str, str | None]
    crc32c: int
    state: SegmentState = SegmentState.COPY_STARTED
    state_ms: int = 0

    @classmethod
    def from_summary(
        cls,
        summary: SegmentSummary,
        *,
        upload_id: str,
        uploader_epoch: int,
        objects: dict[str, str | None],
        state: SegmentState = SegmentState.COPY_STARTED,
        state_ms: int = 0,
    ) -> RemoteSegment:
        """The manifest entry for one upload of the ``.log`` summarized as ``summary``
        (offsets, timestamps, counts, leader epochs, size and CRC-32C come from it)."""
        return cls(
            **asdict(summary),  # every SegmentSummary field is a RemoteSegment field
            upload_id=upload_id,
            uploader_epoch=uploader_epoch,
            objects=objects,
            state=state,
            state_ms=state_ms,
        )

    def key(self, suffix: str) -> str | None:
        """The object key of ``suffix`` (``log``, ``index``, ...), None if not uploaded."""
        return self.objects.get(suffix)

    def with_state(self, state: SegmentState, now_ms: int) -> RemoteSegment:
        if state not in _NEXT_STATES[self.state]:
            raise ValueError(f"segment {self.base_offset}: illegal {self.state} -> {state}")
        return replace(self, state=state, state_ms=now_ms)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["leader_epochs"] = [list(e) for e in self.leader_epochs]
        d["state"] = str(self.state)
        return d

    @cached_property
    def json(self) -> str:
        """This entry as one line of JSON, encoded once: the entry never changes."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RemoteSegment:
        return cls(
            base_offset=int(d["base_offset"]),
            end_offset=int(d["end_offset"]),
            first_timestamp=int(d.get("first_timestamp", -1)),
            max_timestamp=int(d.get("max_timestamp", -1)),
            size_bytes=int(d["size_bytes"]),
            record_count=int(d.get("record_count", 0)),
            leader_epochs=[(int(e), int(o)) for e, o in d.get("leader_epochs", [])],
            upload_id=str(d["upload_id"]),
            uploader_epoch=int(d.get("uploader_epoch", 0)),
            objects={str(k): (None if v is None else str(v)) for k, v in d["objects"].items()},
            crc32c=int(d["crc32c"]),
            state=SegmentState(d["state"]),
            state_ms=int(d.get("state_ms", 0)),
        )


class _ReadableIndex:
    """The readable segments of one manifest version, for bisection.

    ``max_ends[i]`` is the greatest end offset among ``segments[: i + 1]``: overlapping
    entries (a segment uploaded again by a later leader) make end offsets non-monotonic, and
    the running maximum is what tells a backwards scan it can stop.
    """

    def __init__(self, manifest: PartitionManifest) -> None:
        start = manifest.log_start_offset
        self.segments = [
            s
            for s in manifest.segments
            if s.state == SegmentState.COPY_FINISHED and s.end_offset >= start
        ]
        self.bases = [s.base_offset for s in self.segments]
        self.max_ends: list[int] = []
        for s in self.segments:
            self.max_ends.append(max(s.end_offset, self.max_ends[-1] if self.max_ends else -1))
        self.size_bytes = sum(s.size_bytes for s in self.segments)
        done = SegmentState.COPY_FINISHED
        self.finished_end = max(
            (s.end_offset for s in manifest.segments if s.state == done), default=-1
        )


@dataclass
class PartitionManifest:
    """One partition's manifest.

    Invariant the query index relies on: ``segments`` is replaced (``upsert`` builds a new
    list), never edited in place, and entries are immutable. The index is rebuilt when the
    list object or ``log_start_offset`` changes.
    """

    topic: str
    partition: int
    leader_epoch: int = 0
    log_start_offset: int = 0
    segments: list[RemoteSegment] = field(default_factory=list)
    topic_id: str | None = None  # None: written before topic ids (or by a test without one)
    _index: tuple[list[RemoteSegment], int, _ReadableIndex] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    # ---- queries (readers) --------------------------------------------------------------

    def _readable(self) -> _ReadableIndex:
        cached = self._index
        if cached is None or cached[0] is not self.segments or cached[1] != self.log_start_offset:
            cached = (self.segments, self.log_start_offset, _ReadableIndex(self))
            self._index = cached
        return cached[2]

    def readable_segments(self) -> list[RemoteSegment]:
        """COPY_FINISHED segments holding offsets >= log_start_offset, by base offset."""
        return list(self._readable().segments)

    def iter_readable(self) -> Iterator[RemoteSegment]:
        """:meth:`readable_segments` without copying the list (for a scan that stops early)."""
        return iter(self._readable().segments)

    def segment_for_offset(self, offset: int) -> RemoteSegment | None:
        """The readable segment holding ``offset`` (the latest base offset when they overlap)."""
        if offset < self.log_start_offset:
            return None
        index = self._readable()
        i = bisect_right(index.bases, offset) - 1
        while i >= 0 and index.max_ends[i] >= offset:
            if index.segments[i].end_offset >= offset:
                return index.segments[i]
            i -= 1
        return None

    def segment_after(self, offset: int) -> RemoteSegment | None:
        """The first readable segment with data above ``offset`` (for a gap-free scan)."""
        index = self._readable()
        i = bisect_right(index.max_ends, offset)
        return index.segments[i] if i < len(index.segments) else None

    def end_offset(self) -> int:
        """Highest offset held in COPY_FINISHED segments, -1 when none."""
        return self._readable().finished_end

    def next_offset(self) -> int:
        """One past the highest uploaded offset (the local-retention upper bound)."""
        return self.end_offset() + 1

    def upload_bound(self) -> int:
        """First offset the bucket still needs: past the uploaded data and the log start offset
        (offsets below a log start offset raised by retention are never uploaded again, and
        their local segments may go)."""
        return max(self.next_offset(), self.log_start_offset)

    def remote_log_start_offset(self) -> int | None:
        """First offset readable from the bucket, None when nothing is."""
        readable = self._readable().segments
        if not readable:
            return None
        return max(self.log_start_offset, readable[0].base_offset)

    def size_bytes(self) -> int:
        return self._readable().size_bytes

    def offset_for_timestamp_candidates(self, timestamp: int) -> list[RemoteSegment]:
        """Readable segments that may hold the first record with timestamp >= ``timestamp``."""
        return [s for s in self._readable().segments if s.max_timestamp >= timestamp]

    # ---- updates (the leader's uploader) ----------------------------------------------------

    def copy(self) -> PartitionManifest:
        """A copy to mutate: segment entries are immutable (updates replace them), so only the
        list is copied. A deep copy cost the uploader O(entries) object copies per commit on
        the event loop."""
        return replace(self, segments=list(self.segments))

    def upsert(self, segment: RemoteSegment) -> None:
        """Add or replace (same upload_id) a segment entry; DELETE_FINISHED drops it."""
        kept = [s for s in self.segments if s.upload_id != segment.upload_id]
        if segment.state != SegmentState.DELETE_FINISHED:
            kept.append(segment)
        kept.sort(key=lambda s: (s.base_offset, s.end_offset, s.upload_id))
        self.segments = kept

    def _header(self) -> dict[str, Any]:
        header: dict[str, Any] = {"version": VERSION, "topic": self.topic}
        if self.topic_id is not None:
            header["topic_id"] = self.topic_id
        header["partition"] = self.partition
        header["leader_epoch"] = self.leader_epoch
        header["log_start_offset"] = self.log_start_offset
        return header

    def to_dict(self) -> dict[str, Any]:
        return {**self._header(), "segments": [s.to_dict() for s in self.segments]}

    def to_json(self) -> bytes:
        """The document: its header fields on one line, then one line per segment entry."""
        entries = "".join(f"\n  {s.json}," for s in self.segments).rstrip(",")
        return f'{json.dumps(self._header())[:-1]},\n "segments": [{entries}\n]}}\n'.encode()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PartitionManifest:
        _check_version(d)
        return cls(
            topic=str(d["topic"]),
            partition=int(d["partition"]),
            leader_epoch=int(d.get("leader_epoch", 0)),
            log_start_offset=int(d.get("log_start_offset", 0)),
            segments=[RemoteSegment.from_dict(s) for s in d.get("segments", [])],
            topic_id=_topic_id(d),
        )


@dataclass
class TopicManifest:
    topic: str
    partition_count: int
    configs: dict[str, str] = field(default_factory=dict)
    topic_id: str | None = None

    def to_json(self) -> bytes:
        doc: dict[str, Any] = {
            "version": VERSION,
            "topic": self.topic,
            "partition_count": self.partition_count,
            "configs": self.configs,
        }
        if self.topic_id is not None:
            doc["topic_id"] = self.topic_id
        return json.dumps(doc, indent=1, sort_keys=True).encode()


def is_foreign(manifest_topic_id: str | None, topic_id: str | None) -> bool:
    """Whether a manifest carrying ``manifest_topic_id`` belongs to another incarnation than
    ``topic_id``: only when both are known and differ (a manifest without an id, written
    before topic ids, is nobody's foreign; an unknown ``topic_id`` judges nothing)."""
    return manifest_topic_id is not None and topic_id is not None and manifest_topic_id != topic_id


def _topic_id(d: dict[str, Any]) -> str | None:
    value = d.get("topic_id")
    return None if value is None else str(value)


def _check_version(d: dict[str, Any]) -> None:
    if d.get("version") != VERSION:
        raise ManifestFormatError(f"unsupported manifest version {d.get('version')!r}")


def _load(data: bytes | str) -> dict[str, Any]:
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise ManifestFormatError(f"manifest is not JSON: {e}") from e
    if not isinstance(doc, dict):
        raise ManifestFormatError("manifest is not a JSON object")
    return doc


def parse_partition_manifest(data: bytes | str) -> PartitionManifest:
    try:
        return PartitionManifest.from_dict(_load(data))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ManifestFormatError):
            raise
        raise ManifestFormatError(f"malformed partition manifest: {e!r}") from e


def parse_topic_manifest(data: bytes | str) -> TopicManifest:
    doc = _load(data)
    _check_version(doc)
    try:
        configs = {str(k): str(v) for k, v in dict(doc.get("configs", {})).items()}
        return TopicManifest(
            str(doc["topic"]), int(doc["partition_count"]), configs, _topic_id(doc)
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ManifestFormatError(f"malformed topic manifest: {e!r}") from e
