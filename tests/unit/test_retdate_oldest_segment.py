"""Local retention dates the oldest segment of a log opened from disk by its time index's last
entry, read alone, when that entry already keeps it: the first retention check after a start
loads no index and scans no tail (it loaded and sanity-checked both indexes of the oldest
segment and scanned its tail, on the event loop, for every partition). A segment the entry
does not keep, or whose entry cannot be trusted, is dated exactly as before, so retention
never deletes by a wrong timestamp."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.hot.helpers import make_batch
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.time_index import TimeIndex

DAY = 86_400_000
NOW = 1_800_000_000_000


def open_log(dir: Path) -> LocalLog:
    config = LogConfig.from_properties(
        {"file.delete.delay.ms": "0", "retention.ms": str(DAY), "index.interval.bytes": "200"}
    )
    return LocalLog.open(dir, config, clock=lambda: NOW)


def write_segments(dir: Path, *stamps: list[int]) -> None:
    """One rolled segment per list, one batch of 3 records per timestamp, then closed."""
    log = open_log(dir)
    for seed, timestamps in enumerate(stamps):
        for ts in timestamps:
            log.append_as_leader(make_batch(3, timestamp=ts, seed=seed), 0)
        log.roll()
    log.close()


@pytest.fixture
def index_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the .index/.timeindex files loaded (IndexFile reads a whole file at once)."""
    reads: list[str] = []
    original = Path.read_bytes

    def counted(path: Path) -> bytes:
        if path.suffix in (".index", ".timeindex"):
            reads.append(path.name)
        return original(path)

    monkeypatch.setattr(Path, "read_bytes", counted)
    yield reads


def test_first_retention_check_after_reopen_loads_no_index(
    tmp_path: Path, index_reads: list[str]
) -> None:
    dir = tmp_path / "t-0"
    write_segments(dir, [NOW - DAY // 2 + i for i in range(10)], [NOW - 10, NOW - 5])
    log = open_log(dir)
    index_reads.clear()
    assert log.apply_retention(now_ms=NOW) == []  # half a day old: kept
    assert index_reads == []  # it loaded both indexes of segment 0 before
    assert [s.base_offset for s in log.segments()] == [0, 30, 36]
    # the first read still loads and checks segment 0's indexes
    assert log.read(12, 1 << 20).first_offset == 12
    assert {f"{0:020d}.index", f"{0:020d}.timeindex"} <= set(index_reads)
    log.close()


def test_expired_oldest_segment_is_still_deleted_after_reopen(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    write_segments(dir, [NOW - 2 * DAY + i for i in range(10)], [NOW - DAY // 2])
    log = open_log(dir)
    deleted = log.apply_retention(now_ms=NOW)
    assert [s.base_offset for s in deleted] == [0]
    assert log.log_start_offset == 30
    log.close()


def test_time_index_short_of_the_newest_batch_does_not_delete(tmp_path: Path) -> None:
    """The last entry is a lower bound: a segment it calls expired is dated from its tail."""
    dir = tmp_path / "t-0"
    write_segments(dir, [NOW - 2 * DAY + i for i in range(10)] + [NOW - DAY // 2], [NOW])
    timeindex = dir / f"{0:020d}.timeindex"
    entry = TimeIndex.ENTRY.size
    assert TimeIndex.ENTRY.unpack(timeindex.read_bytes()[-entry:])[0] == NOW - DAY // 2 + 2
    with open(timeindex, "r+b") as f:  # the roll's final entry lost: the last says 2 days old
        f.truncate(timeindex.stat().st_size - entry)
    log = open_log(dir)
    assert log.apply_retention(now_ms=NOW) == []
    assert log.segments()[0].max_timestamp() == NOW - DAY // 2 + 2
    log.close()


@pytest.mark.parametrize(
    "damage",
    [
        TimeIndex.ENTRY.pack(0, 29),  # a timestamp below the previous entry's
        TimeIndex.ENTRY.pack(NOW, 29)[:7],  # a torn entry
    ],
    ids=["out-of-order", "torn"],
)
def test_untrusted_last_entry_is_not_used(tmp_path: Path, damage: bytes) -> None:
    dir = tmp_path / "t-0"
    write_segments(dir, [NOW - 2 * DAY + i for i in range(10)], [NOW - DAY // 2])
    timeindex = dir / f"{0:020d}.timeindex"
    with open(timeindex, "ab") as f:
        f.write(damage)
    log = open_log(dir)
    assert [s.base_offset for s in log.apply_retention(now_ms=NOW)] == [0]
    assert log.log_start_offset == 30
    log.close()


def test_peek_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / f"{0:020d}.timeindex"
    index = TimeIndex(path, 100)
    index.maybe_append([(5, 101), (7, 104)])
    index.close()
    with open(path, "ab") as f:
        f.write(b"\x00" * 5)  # a torn entry: not trusted, and not trimmed by a peek
    size = path.stat().st_size
    assert TimeIndex(path, 100).peek_last_timestamp(110) == -1
    assert path.stat().st_size == size
    path.write_bytes(path.read_bytes()[:-5])
    fresh = TimeIndex(path, 100)
    assert fresh.peek_last_timestamp(110) == 7
    assert fresh.peek_last_timestamp(104) == -1  # the entry's offset is not below 104
    assert TimeIndex(tmp_path / "absent.timeindex", 0).peek_last_timestamp(10) == -1
