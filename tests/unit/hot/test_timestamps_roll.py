"""segment.ms at append time by the records' own clock (Kafka's LogSegment.timeWaitedForRoll):
the greatest timestamp appended minus the active segment's first batch's max timestamp; the
wall clock only for a segment whose first batch carries no timestamp."""

from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch

from .helpers import make_batch

HOUR = 3_600_000
NOW = 1_800_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> int:
        return self.now


def open_log(dir: Path, clock: Clock) -> LocalLog:
    return LocalLog.open(dir, LogConfig.from_properties({"segment.ms": str(HOUR)}), clock=clock)


def bases(log: LocalLog) -> list[int]:
    return [s.base_offset for s in log.segments()]


def test_a_backfill_rolls_by_record_time(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", Clock())  # the wall clock stands still
    for i in range(4):
        log.append_as_leader(make_batch(1, timestamp=NOW - 10 * HOUR + i * 90 * 60_000), 0)
    assert bases(log) == [0, 1, 2, 3]
    log.append_as_leader(make_batch(1, timestamp=NOW - 10 * HOUR + 4 * HOUR), 0)
    assert bases(log) == [0, 1, 2, 3]  # 1.5 h after the segment's first record: not above 1 h


def test_records_stamped_now_do_not_roll_a_segment_of_old_ones_before_segment_ms(
    tmp_path: Path,
) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    log.append_as_leader(make_batch(1, timestamp=NOW - 30 * 60_000), 0)
    clock.now += HOUR  # an hour of wall time, 1.5 h of record time: rolled
    log.append_as_leader(make_batch(1, timestamp=clock.now), 0)
    assert bases(log) == [0, 1]
    clock.now += HOUR  # the new segment's first record is an hour old: exactly segment.ms
    log.append_as_leader(make_batch(1, timestamp=clock.now), 0)
    assert bases(log) == [0, 1]


def test_without_timestamps_the_wall_clock_rolls(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    unstamped = bytearray(encode_batch([(b"k", b"v", [], -1)]))
    log.append_as_leader(unstamped, 0)
    clock.now += HOUR + 1
    log.append_as_leader(bytearray(encode_batch([(b"k", b"v", [], -1)])), 0)
    assert bases(log) == [0, 1]


def test_a_truncated_segment_is_dated_by_its_new_first_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", Clock())
    log.append_as_leader(make_batch(1, timestamp=NOW - 5 * HOUR), 0)
    log.truncate_to(0)
    log.append_as_leader(make_batch(1, timestamp=NOW), 0)
    log.append_as_leader(make_batch(1, timestamp=NOW + 1000), 0)
    assert bases(log) == [0]
