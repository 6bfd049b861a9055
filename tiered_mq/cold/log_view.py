"""What the cold tier needs of the broker's local log: the few members of hot.LocalLog,
hot.LogSegment and hot.LogConfig it uses, as protocols (hot.* satisfies them; tests may
pass small fakes).

Calls that read or change the log's state (``segments``, ``next_segment_base``,
``apply_retention``, ``set_log_start_offset``) run under the partition lock the broker gives
to ``RemoteLogManager.on_become_leader``; the uploader reads a rolled segment's files by path
without the lock (``read_segment_files``: a rolled segment is immutable; if it vanishes
meanwhile, the attempt is dropped and the next pass looks again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tiered_mq.cold import layout


class SegmentView(Protocol):
    base_offset: int
    size: int

    def next_offset(self) -> int: ...


class LocalLogView(Protocol):
    dir: Path
    log_start_offset: int

    @property
    def log_end_offset(self) -> int: ...

    @property
    def local_log_start_offset(self) -> int: ...

    @property
    def txn_index_unwritten_from(self) -> int | None: ...

    def segments(self) -> Sequence[SegmentView]: ...

    def apply_retention(self, now_ms: int, upper_bound_offset: int | None = None) -> list[Any]: ...

    def set_log_start_offset(self, offset: int) -> None: ...


class LogConfigView(Protocol):
    @property
    def retention_ms(self) -> int: ...

    @property
    def retention_bytes(self) -> int: ...


class PartitionView(Protocol):
    """The broker's Partition (broker/partition.py), as ARCHITECTURE.md's
    ``on_become_leader(tp, partition)`` passes it."""

    log: Any
    leader_epoch: int
    lock: Any

    @property
    def last_stable_offset(self) -> int: ...


def segment_file(log_dir: Path, base_offset: int, suffix: str) -> Path:
    """Path of a local segment file (Kafka's 20-digit names; see hot/log_files.py)."""
    return log_dir / f"{base_offset:020d}.{suffix}"


@dataclass(frozen=True)
class RolledSegment:
    """A rolled local segment as an upload sees it: offsets ``[base_offset, next_offset)`` in
    the first ``size`` bytes of its ``.log``."""

    base_offset: int
    next_offset: int
    size: int


def read_segment_files(log_dir: Path, segment: RolledSegment) -> dict[str, bytes]:
    """A rolled segment's files by layout suffix: the ``.log`` (its first ``size`` bytes),
    ``.index`` and ``.timeindex`` (empty when missing), the producer snapshot at its next
    offset and the ``.txnindex`` (left out when missing). Raises FileNotFoundError when the
    ``.log`` is gone (local retention deleted the segment meanwhile)."""
    files: dict[str, bytes] = {}
    with open(segment_file(log_dir, segment.base_offset, layout.LOG), "rb") as f:
        files[layout.LOG] = f.read(segment.size)
    for suffix, offset, required in (
        (layout.INDEX, segment.base_offset, True),
        (layout.TIME_INDEX, segment.base_offset, True),
        (layout.SNAPSHOT, segment.next_offset, False),
        (layout.TXN_INDEX, segment.base_offset, False),
    ):
        path = segment_file(log_dir, offset, suffix)
        try:
            files[suffix] = path.read_bytes()
        except FileNotFoundError:
            if required:
                files[suffix] = b""
    return files
