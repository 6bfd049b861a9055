"""After a clean shutdown (the recovery point at the log end offset) the open trusts the
active segment, as Kafka skips recovery after a clean shutdown: it reads the headers after the
segment's last index entry only. It read every header of the segment again at each start (a
32 MiB active segment of one-record batches: 1.3-2 s per start). Anything past the recovery
point is still recovered: unflushed batches, a torn tail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.hot.helpers import make_batch, read_all
from tiered_mq.hot import header_scan, log_files, log_segment
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

CONFIG = LogConfig.from_properties({"segment.bytes": str(64 << 20)})


def filled(dir: Path, batches: int) -> tuple[LocalLog, bytes]:
    log = LocalLog.open(dir, CONFIG)
    for i in range(batches):
        log.append_as_leader(make_batch(1, seed=i, value_size=40), 1)
    return log, read_all(log)


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes each ``os.pread`` of the segment code reads from now on."""
    reads: list[int] = []
    real = os.pread

    def pread(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        reads.append(len(data))
        return data

    for module in (log_segment, header_scan):
        monkeypatch.setattr(module.os, "pread", pread)
    return reads


def test_a_clean_shutdown_s_active_segment_is_not_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dir = tmp_path / "t-0"
    log, data = filled(dir, 20_000)  # ~2 MiB of one-record batches, one segment
    log.close()
    size = log_files.log_file(dir, 0).stat().st_size
    assert len(list(dir.glob("*.log"))) == 1 and size > 1 << 20

    reads = counting_reads(monkeypatch)
    reopened = LocalLog.open(dir, CONFIG)
    assert sum(reads) < 128 << 10, f"read {sum(reads)} of {size} bytes"
    monkeypatch.undo()
    assert reopened.log_end_offset == reopened.recovery_point == 20_000
    assert read_all(reopened) == data
    reopened.append_as_leader(make_batch(1, seed=1), 1)  # the tail state from the lazy checks
    assert reopened.log_end_offset == 20_001
    reopened.close()


def test_batches_past_a_clean_shutdown_are_still_recovered(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    log, data = filled(dir, 2_000)
    log.close()
    log = LocalLog.open(dir, CONFIG)
    for i in range(10):  # appended after the clean start, never flushed: a crash follows
        log.append_as_leader(make_batch(1, seed=100 + i, value_size=40), 1)
    for segment in log.segments():
        segment.close()
    path = log_files.log_file(dir, 0)
    raw = bytearray(path.read_bytes())
    raw[-20] ^= 0x01  # a record byte of the last batch: its CRC-32C fails
    path.write_bytes(raw)

    recovered = LocalLog.open(dir, CONFIG)
    assert recovered.log_end_offset == 2_009  # the corrupt batch, past the recovery point, cut
    assert read_all(recovered)[: len(data)] == data
    recovered.close()


def test_a_torn_tail_after_a_clean_shutdown_is_truncated(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    log, data = filled(dir, 2_000)
    log.close()
    path = log_files.log_file(dir, 0)
    size = path.stat().st_size
    with open(path, "ab") as out:
        out.write(bytes(make_batch(1, seed=5))[:-7])  # a batch cut short past the end

    reopened = LocalLog.open(dir, CONFIG)
    assert path.stat().st_size == size
    assert reopened.log_end_offset == 2_000
    assert read_all(reopened) == data
    reopened.close()
