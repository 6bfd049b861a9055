"""Removing segments from a LocalLog: delayed deletion and compaction's segment swap.

Deletion is two-phase, as in Kafka: a segment leaving the log has its files renamed with the
``.deleted`` suffix at once, and is closed and its files removed once its deadline passes
(``file.delete.delay.ms`` for retention and compaction, 0 for truncation), so reads in flight
(FileRegions being sent) finish. A crash in between leaves ``.deleted`` files, which recovery
removes.

Swap (Kafka's ``replaceSegments``): the compaction output is written as ``<base>.log.swap``
(and optionally ``.index.swap``, ``.timeindex.swap``, ``.txnindex.swap``) by the cleaner;
:func:`install_swap_files` renames them to their final names, the ``.log`` last, then fsyncs
the directory. A crash at any step leaves a ``.swap`` (recovery completes the swap) or the
finished swap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.log_segments import LogSegments


class PendingDeletes:
    """Segments renamed ``.deleted`` and waiting for their deadline (ms) to be removed."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, LogSegment]] = []

    def schedule(self, segment: LogSegment, deadline_ms: int) -> None:
        """Rename ``segment``'s files ``.deleted`` now; remove them at ``deadline_ms``."""
        segment.rename_suffix(log_files.DELETED_SUFFIX)
        self._pending.append((deadline_ms, segment))

    def delete_expired(self, now_ms: int) -> None:
        """Close and remove every scheduled segment whose deadline is <= ``now_ms``."""
        keep: list[tuple[int, LogSegment]] = []
        for deadline, segment in self._pending:
            if deadline <= now_ms:
                segment.close()
                segment.delete_files(log_files.DELETED_SUFFIX)
            else:
                keep.append((deadline, segment))
        self._pending = keep


def oldest_prefix(
    segments: Sequence[LogSegment], which: Sequence[LogSegment] | Callable[[LogSegment], bool]
) -> list[LogSegment]:
    """The oldest consecutive ``segments`` in ``which`` (a list, or a predicate), never the
    last (active) segment."""
    if callable(which):
        predicate = which
    else:
        chosen = {id(s) for s in which}

        def predicate(segment: LogSegment) -> bool:
            return id(segment) in chosen

    prefix: list[LogSegment] = []
    for segment in segments[:-1]:
        if not predicate(segment):
            break
        prefix.append(segment)
    return prefix


def check_replacement(segments: LogSegments, old: Sequence[LogSegment], new_base: int) -> None:
    """Raise ValueError unless ``old`` are consecutive non-active segments of ``segments``,
    oldest first, starting at ``new_base`` (the map may have changed since the cleaner
    chose them)."""
    if not old or old[0].base_offset != new_base:
        raise ValueError(f"replacement at {new_base} does not start the old segments")
    bases = segments.base_offsets()
    first = bases.index(new_base) if new_base in bases else -1
    if (
        first < 0
        or first + len(old) >= len(bases)  # the active segment is never replaced
        or any(
            segments.get(b) is not s
            for b, s in zip(bases[first : first + len(old)], old, strict=True)
        )
    ):
        raise ValueError(f"segments from {new_base} changed; replacement abandoned")


def install_swap_files(dir: Path, new_base: int) -> None:
    """Rename the ``.swap`` files of the segment at ``new_base`` to their final names (the
    ``.log`` last) and fsync ``dir``."""
    stem = log_files.file_name(new_base)
    for ext in (*log_files.SEGMENT_SUFFIXES[1:], log_files.LOG_SUFFIX):
        swap = dir / (stem + ext + log_files.SWAP_SUFFIX)
        if swap.exists():
            swap.replace(dir / (stem + ext))
    log_files.fsync_dir(dir)
