"""Local retention: which of the oldest segments may be deleted.

Kafka's three rules, checked from the oldest segment and stopping at the first that is kept
(so only a prefix of the log is ever deleted, and never the active segment):

- time: the segment's greatest timestamp is older than ``retention.ms`` (-1: forever);
- size: the log without the segment is still at least ``retention.bytes`` (-1: unbounded);
- log start offset: the segment lies wholly below the log start offset.

With tiered storage an ``upper_bound_offset`` (the first offset not yet in the object store)
keeps every segment holding data at or above it, unless ``remote.log.copy.disable`` stopped the
uploads (KIP-950): then retention.ms/bytes apply to the local log, unbounded, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Protocol, TypeVar

from tiered_mq.hot.log_config import LogConfig


class _Segment(Protocol):
    base_offset: int
    size: int

    def max_timestamp(self) -> int: ...


S = TypeVar("S", bound=_Segment)


def deletable_segments(
    segments: Sequence[S],
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
    log_start_offset: int,
    upper_bound_offset: int | None = None,
) -> list[S]:
    """The oldest segments (excluding the last, active one) that retention allows deleting."""
    total = sum(s.size for s in segments)
    out: list[S] = []
    for segment, following in pairwise(segments):
        end = following.base_offset  # every offset in the segment is below this
        if upper_bound_offset is not None and end > upper_bound_offset:
            break
        by_time = retention_ms >= 0 and now_ms - segment.max_timestamp() > retention_ms
        by_size = retention_bytes >= 0 and total - segment.size >= retention_bytes
        by_start = end <= log_start_offset
        if not (by_time or by_size or by_start):
            break
        out.append(segment)
        total -= segment.size
    return out


def retention_limits(
    config: LogConfig, upper_bound_offset: int | None
) -> tuple[int, int, int | None] | None:
    """``(retention_ms, retention_bytes, upper_bound_offset)`` for :func:`deletable_segments`
    on the local log, or None when nothing may be deleted: (-1, -1, bound) (only the log start
    offset rule) when ``cleanup.policy`` lacks delete; with ``remote.storage.enable`` (and
    copies not disabled) the local retention settings and the bound (the first offset not yet
    uploaded), None while the bound is unknown; else retention.ms/bytes, unbounded."""
    if not config.delete:
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
