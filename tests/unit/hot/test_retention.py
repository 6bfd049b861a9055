from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch

BATCH = len(make_batch(3))


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def five_segments(dir: Path, clock: Clock, **props: str) -> LocalLog:
    """Segments [0, 6, 12, 18, 24(active)], two batches each; timestamps 1000 * segment."""
    extra = {k.replace("_", "."): v for k, v in props.items()}
    config = LogConfig.from_properties({"segment.bytes": str(BATCH * 2), **extra})
    log = LocalLog.open(dir, config, clock=clock)
    for i in range(9):
        log.append_as_leader(make_batch(3, timestamp=1000 * (i // 2), seed=i), 0)
    assert [s.base_offset for s in log.segments()] == [0, 6, 12, 18, 24]
    return log


def test_retention_by_time_and_size(tmp_path: Path) -> None:
    log = five_segments(tmp_path / "t-0", Clock())
    by_time = log.retention_candidates(now_ms=2_500, retention_ms=1_000, retention_bytes=-1)
    assert [s.base_offset for s in by_time] == [0, 6]  # max ts 1 and 1001 < 1500
    by_size = log.retention_candidates(now_ms=0, retention_ms=-1, retention_bytes=BATCH * 4)
    assert [s.base_offset for s in by_size] == [0, 6]  # keeps 18 + 24 + ... >= 4 batches
    assert log.retention_candidates(10**9, -1, -1) == []
    everything = log.retention_candidates(10**9, 0, -1)
    assert [s.base_offset for s in everything] == [0, 6, 12, 18, 24]  # the active one too
    bounded = log.retention_candidates(10**9, 0, -1, upper_bound_offset=12)
    assert [s.base_offset for s in bounded] == [0, 6]


def test_delete_advances_log_start_and_delays_file_removal(tmp_path: Path) -> None:
    clock = Clock()
    dir = tmp_path / "t-0"
    log = five_segments(dir, clock, retention_ms="1000", file_delete_delay_ms="60000")
    in_flight = log.read(0, 10**6)  # a fetch holding regions of segments about to go
    deleted = log.apply_retention(now_ms=2_500)
    assert [s.base_offset for s in deleted] == [0, 6]
    assert log.log_start_offset == 12 == log.local_log_start_offset
    assert sorted(p.name for p in dir.glob("*.log.deleted")) == [
        "00000000000000000000.log.deleted",
        "00000000000000000006.log.deleted",
    ]
    assert b"".join(r.read() for r in in_flight.regions)  # still readable
    clock.now += 60_000
    log.maybe_roll(clock.now)
    assert not list(dir.glob("*.deleted"))
    log.close()
    reopened = LocalLog.open(dir, log.config, clock=clock)
    assert reopened.log_start_offset == 12
    assert [s.base_offset for s in reopened.segments()] == [12, 18, 24]


def test_tiered_local_retention_respects_upload_bound(tmp_path: Path) -> None:
    clock = Clock()
    props = {"remote.storage.enable": "true", "local.retention.ms": "1000"}
    log = five_segments(tmp_path / "t-0", clock, **props)
    assert log.apply_retention(now_ms=10**9) == []  # no upload bound known: keep everything
    deleted = log.apply_retention(now_ms=10**9, upper_bound_offset=13)
    assert [s.base_offset for s in deleted] == [0, 6]
    assert log.log_start_offset == 0  # the object store still holds 0..11
    assert log.local_log_start_offset == 12
    log.set_log_start_offset(6)  # remote retention removed 0..5
    assert log.log_start_offset == 6


def test_log_start_offset_makes_segments_deletable(tmp_path: Path) -> None:
    log = five_segments(tmp_path / "t-0", Clock(), retention_ms="-1")
    log.set_log_start_offset(13)
    assert log.local_log_start_offset == 13
    assert [s.base_offset for s in log.apply_retention(now_ms=0)] == [0, 6]
    assert log.read(13, 10).first_offset == 12
    log.set_log_start_offset(5)  # never lowered without remote storage
    assert log.log_start_offset == 13


def test_delete_segments_takes_only_a_prefix(tmp_path: Path) -> None:
    log = five_segments(tmp_path / "t-0", Clock())
    deleted = log.delete_segments(lambda s: s.base_offset != 6)
    assert [s.base_offset for s in deleted] == [0]
    segments = log.segments()
    assert [s.base_offset for s in log.delete_segments(segments[0:2])] == [6, 12]
    assert [s.base_offset for s in log.delete_segments(lambda s: True)] == [18]
    assert [s.base_offset for s in log.segments()] == [24]
