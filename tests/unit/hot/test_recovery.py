import os
from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import iter_batches

from .helpers import make_batch, read_all

BATCH = len(make_batch(3))
CONFIG = LogConfig.from_properties({"segment.bytes": str(BATCH * 4), "index.interval.bytes": "100"})


def build(dir: Path, batches: int = 10, flush: bool = False) -> bytes:
    log = LocalLog.open(dir, CONFIG)
    for i in range(batches):
        log.append_as_leader(make_batch(3, seed=i, timestamp=100 * i), 1)
    if flush:
        log.flush()
    data = read_all(log)
    # simulate a crash: no close(), so the recovery point checkpoint stays where it was
    for segment in log.segments():
        segment.close()
    return data


def test_torn_tail_is_truncated_and_appends_continue(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    data = build(dir)
    active = log_files.log_file(dir, 24)
    os.truncate(active, active.stat().st_size - 7)  # tear the last batch
    log = LocalLog.open(dir, CONFIG)
    assert log.log_end_offset == 27
    assert read_all(log) == data[:-BATCH]
    log.append_as_leader(make_batch(3, seed=99), 1)
    assert log.log_end_offset == 30
    assert len(iter_batches(read_all(log))) == 10


def test_corrupt_batch_truncates_and_drops_later_segments(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    data = build(dir)
    seg = log_files.log_file(dir, 12)
    raw = bytearray(seg.read_bytes())
    raw[BATCH + 70] ^= 0x01  # a record byte of the second batch in segment 12
    seg.write_bytes(raw)
    # rolls checkpointed recovery point 24; an older checkpoint makes segment 12 suspect
    log_files.write_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT, 5)
    log = LocalLog.open(dir, CONFIG)
    assert log.log_end_offset == 15
    assert [s.base_offset for s in log.segments()] == [0, 12]
    assert read_all(log) == data[: 5 * BATCH]
    assert not log_files.log_file(dir, 24).exists()


def test_below_recovery_point_is_trusted(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    build(dir, flush=True)
    assert log_files.read_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT) == 24  # last roll
    LocalLog.open(dir, CONFIG).close()
    assert log_files.read_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT) == 30
    # a flipped record byte in an old, flushed segment is not scanned for at open
    seg = log_files.log_file(dir, 0)
    raw = bytearray(seg.read_bytes())
    raw[70] ^= 0x01
    seg.write_bytes(raw)
    assert LocalLog.open(dir, CONFIG).log_end_offset == 30


def test_garbage_after_last_batch(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    data = build(dir)
    with open(log_files.log_file(dir, 24), "ab") as f:
        f.write(b"\x00" * 100)  # e.g. preallocated zeros after a crash
    log = LocalLog.open(dir, CONFIG)
    assert read_all(log) == data
    assert log_files.log_file(dir, 24).stat().st_size == 2 * BATCH


def test_missing_and_corrupt_indexes_are_rebuilt(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    build(dir, batches=10)
    log = LocalLog.open(dir, CONFIG)
    expected = [(s.offset_index.entries(), s.time_index.entries()) for s in log.segments()]
    assert any(e[0] for e in expected)
    log.close()
    log_files.offset_index_file(dir, 0).unlink()
    log_files.time_index_file(dir, 12).write_bytes(b"\xff" * 24)  # timestamps not increasing
    log_files.offset_index_file(dir, 24).write_bytes(b"\x00" * 5)  # torn
    log = LocalLog.open(dir, CONFIG)
    assert log.read(7, 1).first_offset == 6
    assert log.offset_for_timestamp(450) == (15, 500)
    rebuilt = [(s.offset_index.entries(), s.time_index.entries()) for s in log.segments()]
    assert rebuilt[0][0] == expected[0][0]
    assert rebuilt[1][1][: len(expected[1][1])] == expected[1][1]
    assert rebuilt[2] == expected[2]


def test_stray_files_removed(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    build(dir)
    for name in (
        "00000000000000000000.log.deleted",
        "00000000000000000003.log.cleaned",
        "recovery-point-offset-checkpoint.tmp",
        "00000000000000000999.index",
        "00000000000000000999.timeindex",
    ):
        (dir / name).write_bytes(b"junk")
    LocalLog.open(dir, CONFIG)
    names = {p.name for p in dir.iterdir()}
    assert not any(n.endswith((".deleted", ".cleaned", ".tmp")) for n in names)
    assert "00000000000000000999.index" not in names


def test_swap_completes_compaction(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    data = build(dir)
    batches = iter_batches(data)
    # a compacted segment covering offsets 0..23 that kept only the batches at 0 and 21
    kept = [data[p : p + h.size] for p, h in batches if h.base_offset in (0, 21)]
    (dir / "00000000000000000000.log.swap").write_bytes(b"".join(kept))
    (dir / "00000000000000000000.index.swap").write_bytes(b"")
    log = LocalLog.open(dir, CONFIG)
    assert [s.base_offset for s in log.segments()] == [0, 24]
    assert [h.base_offset for h in log.iter_batch_headers(0)] == [0, 21, 24, 27]
    assert not list(dir.glob("*.swap"))


def test_empty_dir_starts_at_log_start_checkpoint(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    dir.mkdir()
    log_files.write_checkpoint(dir / log_files.LOG_START_OFFSET_CHECKPOINT, 500)
    log = LocalLog.open(dir, CONFIG)
    assert (log.log_start_offset, log.log_end_offset) == (500, 500)
    assert log_files.log_file(dir, 500).exists()
    log.append_as_leader(make_batch(), 0)
    assert log.read(500, 100).first_offset == 500
