"""A log opened in a directory just created (``LocalLog.open(new=True)``, what the broker does
for each partition of a CreateTopics): it writes its ``.log`` and nothing else, no checkpoint
and no index file, and it behaves as any log: appends index as usual, and it reopens readable
after a clean close and after a crash (no close at all, or the files of the unsynced directory
lost)."""

from __future__ import annotations

from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch, read_all

CONFIG = LogConfig.from_properties({"index.interval.bytes": "100"})


def new_log(dir: Path) -> LocalLog:
    dir.mkdir()
    return LocalLog.open(dir, CONFIG, sync_dir=False, new=True)


def fill(log: LocalLog, batches: int) -> bytes:
    for i in range(batches):
        log.append_as_leader(make_batch(3, timestamp=1_000 + 10 * i, seed=i), 0)
    return read_all(log)


def test_a_new_log_writes_only_its_segment(tmp_path: Path) -> None:
    log = new_log(tmp_path / "t-0")
    assert log.created
    assert [p.name for p in (tmp_path / "t-0").iterdir()] == ["00000000000000000000.log"]
    assert log.log_end_offset == log.log_start_offset == log.recovery_point == 0
    log.close()  # nothing moved: still no checkpoint file
    assert [p.name for p in (tmp_path / "t-0").iterdir()] == ["00000000000000000000.log"]
    reopened = LocalLog.open(tmp_path / "t-0", CONFIG)
    assert not reopened.created
    assert reopened.log_end_offset == reopened.log_start_offset == 0


def test_indexes_appear_with_their_first_entry_and_serve_lookups(tmp_path: Path) -> None:
    log = new_log(tmp_path / "t-0")
    data = fill(log, 20)
    assert log_files.offset_index_file(log.dir, 0).stat().st_size > 0
    assert log_files.time_index_file(log.dir, 0).stat().st_size > 0
    assert log.offset_for_timestamp(1_000 + 10 * 7) == (21, 1_070)
    log.close()
    reopened = LocalLog.open(log.dir, CONFIG)
    assert read_all(reopened) == data
    assert reopened.offset_for_timestamp(1_000 + 10 * 7) == (21, 1_070)


def test_a_crash_before_any_index_entry_reopens_readable(tmp_path: Path) -> None:
    log = new_log(tmp_path / "t-0")
    data = fill(log, 1)  # below index.interval.bytes: no index file yet
    assert not log_files.offset_index_file(log.dir, 0).exists()
    reopened = LocalLog.open(log.dir, CONFIG)  # no close: as a SIGKILL leaves it
    assert read_all(reopened) == data
    reopened.append_as_leader(make_batch(3, seed=9), 0)
    assert reopened.log_end_offset == 6


def test_a_new_log_whose_files_were_lost_opens_empty(tmp_path: Path) -> None:
    log = new_log(tmp_path / "t-0")
    log.close()
    for file in log.dir.iterdir():  # a power loss before the directory's fsync
        file.unlink()
    reopened = LocalLog.open(log.dir, CONFIG)
    assert reopened.created and reopened.log_end_offset == 0
    reopened.append_as_leader(make_batch(3), 0)
    assert reopened.log_end_offset == 3


def test_a_log_without_checkpoints_keeps_its_log_start_when_its_first_segment_goes(
    tmp_path: Path,
) -> None:
    """With remote storage the log start offset stays when local segments go (the cold tier
    holds them); absent files would read as the next first segment: they are written then."""
    config = LogConfig.from_properties({"remote.storage.enable": "true"})
    log = LocalLog.open(tmp_path / "t-0", config)
    fill(log, 3)
    log.roll()
    fill(log, 3)
    log.close()
    for name in (log_files.RECOVERY_POINT_CHECKPOINT, log_files.LOG_START_OFFSET_CHECKPOINT):
        (log.dir / name).unlink()  # lost
    reopened = LocalLog.open(log.dir, config)
    assert reopened.log_start_offset == 0
    assert len(reopened.delete_segments(reopened.segments()[:1])) == 1
    assert reopened.local_log_start_offset == 9 and reopened.log_start_offset == 0
    reopened.close()
    assert LocalLog.open(log.dir, config).log_start_offset == 0
