"""Crashes in the middle of a truncation (log_truncation's crash behaviour): the log reopens
valid and appendable, and repeating the truncation gives what an uninterrupted one gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.hot import log_truncation
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.record.batch import iter_batches

from .helpers import make_batch, read_all


class Crash(Exception):
    pass


def _open(dir: Path) -> LocalLog:
    size = len(make_batch(3))
    return LocalLog.open(dir, LogConfig.from_properties({"segment.bytes": str(size * 2)}))


def _filled(dir: Path) -> tuple[LocalLog, list[LogSegment], bytes]:
    log = _open(dir)
    for i in range(8):  # 8 batches of 3 records, 2 batches a segment: bases 0, 6, 12, 18
        log.append_as_leader(make_batch(3, seed=i), 0)
    log.flush()
    return log, log.segments(), read_all(log)


def _crash(segments: list[LogSegment]) -> None:
    """Drop the log as a crash would: no flush, no checkpoint, files just closed."""
    for segment in segments:
        segment.close()


def test_crash_before_the_active_segment_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, segments, data = _filled(tmp_path / "t-0")

    def crash(self: LogSegment, offset: int) -> int:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(LogSegment, "truncate_to", crash)
        with pytest.raises(Crash):
            log.truncate_to(8)  # segments 12 and 18 already renamed .deleted
    _crash(segments)

    reopened = _open(tmp_path / "t-0")
    assert not list((tmp_path / "t-0").glob("*.deleted"))
    assert reopened.log_end_offset == 12  # above the truncation offset: not yet durable
    assert read_all(reopened) == data[: len(read_all(reopened))]
    reopened.truncate_to(8)  # the caller repeats it
    assert reopened.log_end_offset == 6
    reopened.append_as_leader(make_batch(3, seed=9), 1)
    assert [h.base_offset for _, h in iter_batches(read_all(reopened))] == [0, 3, 6]
    reopened.close()


def test_crash_before_truncate_fully_starts_the_new_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, segments, _ = _filled(tmp_path / "t-0")
    log.set_log_start_offset(3)

    def crash(*args: object) -> LogSegment:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(log_truncation, "start_segment", crash)
        with pytest.raises(Crash):
            log.truncate_to(2)  # below the local log start offset: truncates fully
    _crash(segments)

    reopened = _open(tmp_path / "t-0")  # no .log left: an empty log at the checkpointed start
    assert (reopened.log_start_offset, reopened.log_end_offset) == (3, 3)
    assert [s.base_offset for s in reopened.segments()] == [3]
    reopened.truncate_to(2)  # repeated: the log starts where it was asked to
    assert (reopened.log_start_offset, reopened.log_end_offset) == (2, 2)
    reopened.append_as_leader(make_batch(3), 1)
    assert reopened.log_end_offset == 5
    reopened.close()
