"""LocalLog's flush policy and checkpoint files.

Kafka's policy: appends go to the page cache; a flush (fsync of every segment holding data
past the recovery point) happens on ``flush()``, on roll, on close, and once ``flush.messages``
records are unflushed or ``flush.ms`` has passed since the last flush (LONG_MAX: never).

Checkpoints: ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint`` in the
partition directory, each one offset (format in log_files). Each is written to a temporary
file, fsynced and renamed, so a crash leaves the old or the new value, never a torn one; a
stale recovery point only makes recovery validate more of the tail.
"""

from __future__ import annotations

from pathlib import Path

from tiered_mq.errors import KafkaStorageError
from tiered_mq.hot import log_files
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.hot.log_segments import LogSegments

CHECKPOINT_INTERVAL_MS = 60_000  # a flush writes the checkpoints at most this often


def flush_due(config: LogConfig, unflushed_messages: int, last_flush_ms: int, now: int) -> bool:
    """Whether flush.messages or flush.ms calls for a flush now."""
    return unflushed_messages >= config.flush_messages or flush_ms_due(config, last_flush_ms, now)


def flush_ms_due(config: LogConfig, last_flush_ms: int, now: int) -> bool:
    """Whether ``flush.ms`` (when set) has passed since ``last_flush_ms``."""
    return config.flush_ms < LONG_MAX and now - last_flush_ms >= config.flush_ms


def flush_segments(segments: LogSegments, recovery_point: int, log_end_offset: int) -> None:
    """fsync every segment holding data at or past ``recovery_point`` (none when it is the log
    end offset)."""
    if recovery_point < log_end_offset:
        for segment in segments.from_offset(recovery_point):
            segment.flush()


def write_checkpoints(dir: Path, recovery_point: int, log_start_offset: int) -> None:
    """Write both checkpoint files; KafkaStorageError when the disk refuses."""
    try:
        log_files.write_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT, recovery_point)
        log_files.write_checkpoint(dir / log_files.LOG_START_OFFSET_CHECKPOINT, log_start_offset)
    except OSError as exc:
        raise KafkaStorageError(f"{dir}: checkpoint failed: {exc}") from exc
