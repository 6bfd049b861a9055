"""Names of every file in a partition directory: the one place that owns suffixes.

A partition's log lives in one directory named ``{topic}-{partition}`` (renamed
``{topic}-{partition}.{uniqueId}-delete`` when its topic is deleted, then removed:
log_dir_deletion.py). Each segment is a
group of files sharing a stem, the segment's base offset zero-padded to 20 digits so that
``ls`` sorts them numerically (Kafka's ``LogFileUtils``)::

    00000000000000000000.log        record batches v2, exactly as produced
    00000000000000000000.index      sparse offset index (u32 relative offset, u32 position)
    00000000000000000000.timeindex  time index (i64 timestamp, u32 relative offset)
    00000000000000000000.snapshot   producer state snapshot (written by the broker)
    00000000000000000000.txnindex   aborted transaction index

Transient suffixes appended to a full name during a multi-step change:
``.deleted`` (scheduled for deletion), ``.cleaned`` (compaction output being written),
``.swap`` (compaction output complete, replacing old segments). Recovery removes
``.deleted`` and ``.cleaned`` files and completes ``.swap`` files (see recovery.py).

Per-log checkpoint files (same names as Kafka's log-directory checkpoints, one entry each):
``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``. ``partition.metadata``
records the topic id the directory belongs to (partition_metadata.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tiered_mq.durable_file import fsync_dir as fsync_dir
from tiered_mq.durable_file import replace_durably

LOG_SUFFIX: Final = ".log"
INDEX_SUFFIX: Final = ".index"
TIME_INDEX_SUFFIX: Final = ".timeindex"
SNAPSHOT_SUFFIX: Final = ".snapshot"
TXN_INDEX_SUFFIX: Final = ".txnindex"
DELETED_SUFFIX: Final = ".deleted"
CLEANED_SUFFIX: Final = ".cleaned"
SWAP_SUFFIX: Final = ".swap"
DELETE_DIR_SUFFIX: Final = "-delete"  # of a partition directory (Kafka's DeleteDirSuffix)

RECOVERY_POINT_CHECKPOINT: Final = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT: Final = "log-start-offset-checkpoint"

SEGMENT_SUFFIXES: Final = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
_DIGITS: Final = 20


def file_name(offset: int) -> str:
    """The 20-digit stem of a segment with this base offset."""
    return f"{offset:0{_DIGITS}d}"


def log_file(dir: Path, offset: int) -> Path:
    return dir / (file_name(offset) + LOG_SUFFIX)


def offset_index_file(dir: Path, offset: int) -> Path:
    return dir / (file_name(offset) + INDEX_SUFFIX)


def time_index_file(dir: Path, offset: int) -> Path:
    return dir / (file_name(offset) + TIME_INDEX_SUFFIX)


def snapshot_file(dir: Path, offset: int) -> Path:
    return dir / (file_name(offset) + SNAPSHOT_SUFFIX)


def txn_index_file(dir: Path, offset: int) -> Path:
    return dir / (file_name(offset) + TXN_INDEX_SUFFIX)


def offset_from_file_name(name: str) -> int | None:
    """The base offset in a segment file name (``00..042.log`` -> 42), or None if not one."""
    stem = name.split(".", 1)[0]
    if len(stem) != _DIGITS or not stem.isdigit():
        return None
    return int(stem)


def is_log_file(name: str) -> bool:
    return name.endswith(LOG_SUFFIX) and offset_from_file_name(name) is not None


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def write_checkpoint(path: Path, offset: int) -> None:
    """Atomically replace a one-entry checkpoint file: ``0`` (version), then the offset.

    Written to a temporary file, fsynced, renamed over ``path``, and the directory fsynced: after
    a crash the file holds either the old or the new offset, never a torn one.
    """
    replace_durably(path, f"0\n{offset}\n".encode())


def read_checkpoint(path: Path) -> int | None:
    """The offset in a checkpoint file, or None when it is missing or unreadable."""
    try:
        lines = path.read_text().split()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    if len(lines) != 2 or lines[0] != "0":
        return None
    try:
        return int(lines[1])
    except ValueError:
        return None
