"""Local retention: which of the oldest segments may be deleted.

Kafka's three rules (``UnifiedLog.deletableSegments``), checked from the oldest segment and
stopping at the first that is kept, so only a prefix of the log is ever deleted:

- time: the segment's largest timestamp is older than ``retention.ms`` (-1: forever); a
  segment whose batches carry no timestamp (max -1) is dated by its ``.log`` file's last
  modification, as Kafka's ``LogSegment.largestTimestamp``;
- size: the log without the segment is still at least ``retention.bytes`` (-1: unbounded);
- log start offset: the segment lies wholly below the log start offset (the next segment
  starts at or below it; never the active segment).

The active segment is a candidate too when it holds data and breaches the time or size rule:
the caller rolls it first (an empty active segment then takes its place), so a quiet topic's
expired records go after ``retention.ms``, not after ``segment.ms`` (Kafka rolls and deletes
it the same way). With tiered storage an ``upper_bound_offset`` (the first offset not yet in
the object store) keeps every segment holding data at or above it, unless
``remote.log.copy.disable`` stopped the uploads (KIP-950): then retention.ms/bytes apply to the
local log, unbounded, as in Kafka. An active segment kept only by that bound is rolled all the
same (:func:`must_roll_active`), so it can be uploaded and then deleted locally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from tiered_mq.hot.log_config import LogConfig


class _Segment(Protocol):
    base_offset: int
    size: int

    def max_timestamp(self) -> int: ...

    def max_timestamp_at_least(self, end_offset: int) -> int: ...

    def next_offset(self) -> int: ...

    def last_modified_ms(self) -> int: ...


S = TypeVar("S", bound=_Segment)


def largest_timestamp(segment: _Segment) -> int:
    """The time retention.ms judges a segment by: its greatest batch max timestamp, or, when
    no batch carries one (-1), its ``.log`` file's last modification (Kafka's
    ``largestTimestamp``)."""
    max_ts = segment.max_timestamp()
    return max_ts if max_ts >= 0 else segment.last_modified_ms()


def _expired(segment: _Segment, end: int, now_ms: int, ms: int) -> bool:
    """The time rule holds for ``segment`` (offsets below ``end``). A segment that a cheap
    lower bound of its max timestamp (the time index's last entry, read without loading the
    segment's indexes or scanning its tail: ``max_timestamp_at_least``) already keeps is kept:
    its true max timestamp is at least as recent. Only a segment that bound does not keep
    (or that has none) is dated exactly, by :func:`largest_timestamp`, before it is judged
    expired, so no segment is deleted by an untrusted timestamp. On a broker's start this
    spares the first retention check of every partition loading and checking its oldest
    segment's indexes on the event loop."""
    if ms < 0:
        return False
    at_least = segment.max_timestamp_at_least(end)
    if at_least >= 0 and now_ms - at_least <= ms:
        return False
    return now_ms - largest_timestamp(segment) > ms


def _breaches(
    segment: _Segment, end: int, total: int, now_ms: int, ms: int, size_limit: int
) -> bool:
    """The time or size rule holds for ``segment`` (offsets below ``end``) with ``total``
    bytes in the log."""
    return _expired(segment, end, now_ms, ms) or (
        size_limit >= 0 and total - segment.size >= size_limit
    )


def deletable_segments(
    segments: Sequence[S],
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
    log_start_offset: int,
    upper_bound_offset: int | None = None,
) -> list[S]:
    """The oldest segments that retention allows deleting; the last (active) one among them
    only when it holds data (the caller rolls it before deleting it)."""
    total = sum(s.size for s in segments)
    out: list[S] = []
    for i, segment in enumerate(segments):
        following = segments[i + 1] if i + 1 < len(segments) else None
        if following is None and segment.size == 0:
            break
        # every offset in the segment is below this
        end = segment.next_offset() if following is None else following.base_offset
        if upper_bound_offset is not None and end > upper_bound_offset:
            break
        by_start = following is not None and end <= log_start_offset
        if not (by_start or _breaches(segment, end, total, now_ms, retention_ms, retention_bytes)):
            break
        out.append(segment)
        total -= segment.size
    return out


def must_roll_active(
    segments: Sequence[S],
    deletable: Sequence[S],
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
) -> bool:
    """Whether the active segment breaches retention and is kept only because it is not
    uploaded (every older segment is ``deletable``): Kafka then rolls it (``shouldRoll``) so
    the uploader copies it and local retention can delete it."""
    if not segments or len(deletable) != len(segments) - 1 or segments[-1].size == 0:
        return False
    total = sum(s.size for s in segments[len(deletable) :])
    active = segments[-1]
    return _breaches(active, active.next_offset(), total, now_ms, retention_ms, retention_bytes)


def retention_limits(
    config: LogConfig, upper_bound_offset: int | None
) -> tuple[int, int, int | None] | None:
    """``(retention_ms, retention_bytes, upper_bound_offset)`` for :func:`deletable_segments`
    on the local log, or None when nothing may be deleted: (-1, -1, bound) (only the log start
    offset rule) when ``cleanup.policy`` lacks delete, except for an empty policy on a log whose
    segments are copied to the remote tier; with ``remote.storage.enable`` (and copies not
    disabled) the local retention settings and the bound (the first offset not yet uploaded),
    None while the bound is unknown; else retention.ms/bytes, unbounded. Kafka's
    ``deleteOldSegments``: an empty policy keeps an untiered log whole, while a tiered one's
    local copies still go by local retention."""
    if not config.delete and (config.compact or not config.remote_copy_enabled):
        return -1, -1, upper_bound_offset
    if config.remote_copy_enabled:
        if upper_bound_offset is None:
            return None
        return (
            config.effective_local_retention_ms,
            config.effective_local_retention_bytes,
            upper_bound_offset,
        )
    return config.retention_ms, config.retention_bytes, None
