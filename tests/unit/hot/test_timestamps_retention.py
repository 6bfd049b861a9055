"""retention.ms judged as Kafka judges it: the active segment is rolled and deleted once its
records are past retention, and a segment without timestamps is dated by its file's mtime."""

import os
from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch

from .helpers import make_batch

DAY = 86_400_000
NOW = 1_800_000_000_000


def open_log(dir: Path, **props: str) -> LocalLog:
    config = LogConfig.from_properties({"file.delete.delay.ms": "0", **props})
    return LocalLog.open(dir, config, clock=lambda: NOW)


def test_expired_active_segment_is_rolled_and_deleted(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", **{"retention.ms": str(DAY)})
    log.append_as_leader(make_batch(3, timestamp=NOW - 3 * DAY), 0)
    log.append_as_leader(make_batch(2, timestamp=NOW - 2 * DAY), 0)
    deleted = log.apply_retention(now_ms=NOW)
    assert [s.base_offset for s in deleted] == [0]
    assert log.log_start_offset == log.local_log_start_offset == log.log_end_offset == 5
    assert [(s.base_offset, s.size) for s in log.segments()] == [(5, 0)]
    log.append_as_leader(make_batch(1, timestamp=NOW), 0)  # the log goes on at 5
    assert log.apply_retention(now_ms=NOW) == []
    assert log.read(5, 1 << 20).first_offset == 5


def test_active_segment_within_retention_is_kept(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", **{"retention.ms": str(DAY)})
    log.append_as_leader(make_batch(3, timestamp=NOW - 3 * DAY), 0)
    log.append_as_leader(make_batch(1, timestamp=NOW - DAY // 2), 0)  # max timestamp rules
    assert log.apply_retention(now_ms=NOW) == []
    assert [s.base_offset for s in log.segments()] == [0]


def test_segment_without_timestamps_is_dated_by_its_file(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", **{"retention.ms": str(DAY)})
    log.append_as_leader(bytearray(encode_batch([(b"k", b"v", [], -1)] * 2)), 0)
    assert log.segments()[0].max_timestamp() == -1
    log.roll()
    path = log.segments()[0].log_path
    written = path.stat().st_mtime_ns // 1_000_000
    assert log.apply_retention(now_ms=written + DAY // 2) == []  # half a day old: kept
    os.utime(path, ns=(0, (written - 2 * DAY) * 1_000_000))  # last written two days ago
    assert [s.base_offset for s in log.apply_retention(now_ms=written)] == [0]
    assert log.log_start_offset == 2


def test_tiered_active_segment_past_local_retention_is_rolled_for_upload(tmp_path: Path) -> None:
    props = {"remote.storage.enable": "true", "local.retention.ms": str(DAY)}
    log = open_log(tmp_path / "t-0", **props)
    log.append_as_leader(make_batch(3, timestamp=NOW - 2 * DAY), 0)
    assert log.apply_retention(now_ms=NOW, upper_bound_offset=0) == []  # nothing uploaded
    assert [s.base_offset for s in log.segments()] == [0, 3]  # rolled: the uploader's to copy
    deleted = log.apply_retention(now_ms=NOW, upper_bound_offset=3)  # once uploaded
    assert [s.base_offset for s in deleted] == [0]
    assert log.local_log_start_offset == 3
    assert log.log_start_offset == 0  # the bucket still holds 0..2
