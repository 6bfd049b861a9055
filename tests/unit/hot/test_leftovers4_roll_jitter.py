"""segment.jitter.ms (Kafka's rollJitterMs): each segment draws once a jitter in
[0, min(segment.jitter.ms, segment.ms)) and rolls when its age passes segment.ms less that
jitter, at append (by the records' time) and in the periodic roll (by the wall clock). The
random source is injected, so each segment's jitter is known here."""

from __future__ import annotations

from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch

MINUTE = 60_000
HOUR = 60 * MINUTE
NOW = 1_800_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> int:
        return self.now


class Draws:
    """``randrange`` that answers the given jitters in turn and records each bound asked."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.bounds: list[int] = []

    def __call__(self, bound: int) -> int:
        self.bounds.append(bound)
        value = self.values.pop(0)
        assert 0 <= value < bound
        return value


def open_log(dir: Path, draws: Draws, clock: Clock, jitter_ms: int) -> LocalLog:
    config = LogConfig.from_properties(
        {"segment.ms": str(HOUR), "segment.jitter.ms": str(jitter_ms)}
    )
    return LocalLog.open(dir, config, clock=clock, randrange=draws)


def bases(log: LocalLog) -> list[int]:
    return [s.base_offset for s in log.segments()]


def test_each_segment_rolls_at_segment_ms_less_its_own_jitter(tmp_path: Path) -> None:
    draws = Draws(10 * MINUTE, 25 * MINUTE, 0)
    log = open_log(tmp_path / "t-0", draws, Clock(), 30 * MINUTE)
    t0 = NOW - 10 * HOUR  # records stamped in the past: the records' own time decides
    log.append_as_leader(make_batch(1, timestamp=t0), 0)
    log.append_as_leader(make_batch(1, timestamp=t0 + 50 * MINUTE), 0)
    assert bases(log) == [0]  # 50 min: exactly segment.ms less the first segment's 10 min
    log.append_as_leader(make_batch(1, timestamp=t0 + 50 * MINUTE + 1), 0)
    assert bases(log) == [0, 2]  # past it: rolled 10 min before segment.ms
    t1 = t0 + 50 * MINUTE + 1
    log.append_as_leader(make_batch(1, timestamp=t1 + 35 * MINUTE), 0)
    assert bases(log) == [0, 2]  # the second segment drew 25 min: 35 min is not past
    log.append_as_leader(make_batch(1, timestamp=t1 + 35 * MINUTE + 1), 0)
    assert bases(log) == [0, 2, 4]
    assert draws.bounds == [30 * MINUTE, 30 * MINUTE]  # one draw per segment, not per append


def test_the_periodic_roll_takes_the_jitter_off_too(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", Draws(20 * MINUTE), clock, 30 * MINUTE)
    log.append_as_leader(make_batch(1, timestamp=clock.now), 0)
    clock.now += 40 * MINUTE - 1
    assert not log.maybe_roll(clock.now)
    clock.now += 1  # 40 min: segment.ms less the segment's 20 min
    assert log.maybe_roll(clock.now)
    assert bases(log) == [0, 1]


def test_the_jitter_is_bounded_by_segment_ms_and_off_by_default(tmp_path: Path) -> None:
    draws = Draws(HOUR - 1)
    log = open_log(tmp_path / "t-0", draws, Clock(), 5 * HOUR)
    log.append_as_leader(make_batch(1, timestamp=NOW), 0)
    log.append_as_leader(make_batch(1, timestamp=NOW + 2), 0)
    assert draws.bounds == [HOUR]  # min(segment.jitter.ms, segment.ms)
    assert bases(log) == [0, 1]  # 2 ms > segment.ms - (segment.ms - 1)

    untouched = Draws()  # no value to give: a draw would fail
    log = open_log(tmp_path / "t-1", untouched, Clock(), 0)
    t0 = NOW - 2 * HOUR
    log.append_as_leader(make_batch(1, timestamp=t0), 0)
    log.append_as_leader(make_batch(1, timestamp=t0 + HOUR), 0)
    assert bases(log) == [0]  # exactly segment.ms: not past it
    log.append_as_leader(make_batch(1, timestamp=t0 + HOUR + 1), 0)
    assert bases(log) == [0, 2]
    assert untouched.bounds == []
