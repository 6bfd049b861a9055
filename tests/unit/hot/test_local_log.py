import errno
import os
from pathlib import Path

import pytest

from tiered_mq.errors import (
    CorruptRecordError,
    InvalidTimestampError,
    KafkaStorageError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
)
from tiered_mq.hot.local_log import LocalLog, UnexpectedAppendOffsetError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import iter_batches, read_header, validate_batch
from tiered_mq.record.records import encode_batch

from .helpers import make_batch, read_all


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(path: Path, clock: Clock | None = None, **props: str) -> LocalLog:
    config = LogConfig.from_properties({k.replace("_", "."): v for k, v in props.items()})
    return LocalLog.open(path, config, clock=clock or Clock())


def test_append_assigns_offsets_and_epoch_only(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    produced = [make_batch(3, seed=i) for i in range(4)]
    infos = [log.append_as_leader(bytearray(b), leader_epoch=7) for b in produced]
    assert [(i.first_offset, i.last_offset) for i in infos] == [(0, 2), (3, 5), (6, 8), (9, 11)]
    assert infos[0].valid_bytes == len(produced[0]) and infos[0].records_count == 3
    assert log.log_end_offset == 12
    data = read_all(log)
    batches = iter_batches(data)  # validates every CRC
    assert len(batches) == 4
    for (pos, header), original in zip(batches, produced, strict=True):
        assert header.partition_leader_epoch == 7
        raw = data[pos : pos + header.size]
        assert raw[12:16] == (7).to_bytes(4, "big")
        assert raw[16:] == bytes(original[16:])  # everything after offset/length/epoch unchanged
        assert raw[8:12] == bytes(original[8:12])


def test_append_many_batches_in_one_request(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes="100")
    records = bytearray(b"".join(make_batch(2, seed=i) for i in range(10)))
    info = log.append_as_leader(records, 1)
    assert (info.first_offset, info.last_offset, info.valid_bytes) == (0, 19, len(records))
    entries = log.active_segment.offset_index.entries()
    assert entries and all(o % 2 == 1 for o, _ in entries)  # last offsets of batches
    for offset in range(20):
        got = log.read(offset, 1)
        assert read_header(got.regions[0].read()).base_offset == offset - offset % 2


def test_read_limits(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    batch_size = len(make_batch(3))
    for i in range(5):
        log.append_as_leader(make_batch(3, seed=i), 0)
    assert log.read(4, 2 * batch_size).size == 2 * batch_size
    assert log.read(4, 2 * batch_size).first_offset == 3
    assert log.read(0, 2 * batch_size - 1).size == batch_size
    assert log.read(0, 10).size == batch_size  # min_one_batch
    assert log.read(0, 10, min_one_batch=False).size == 0
    assert log.read(0, 10**6, max_offset=6).size == 2 * batch_size
    assert log.read(6, 10**6, max_offset=6).regions == []
    empty = log.read(15, 100)
    assert (empty.first_offset, empty.size, empty.regions) == (15, 0, [])
    with pytest.raises(OffsetOutOfRangeError):
        log.read(16, 100)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)


def test_roll_before_overflow_and_read_spans_segments(tmp_path: Path) -> None:
    rolls: list[int] = []
    batch_size = len(make_batch(3))
    config = LogConfig.from_properties({"segment.bytes": str(batch_size * 3 + 10)})
    log = LocalLog.open(tmp_path / "t-0", config, rolls.append)
    for i in range(10):
        log.append_as_leader(make_batch(3, seed=i), 0)
    assert rolls == [9, 18, 27]
    assert [s.base_offset for s in log.segments()] == [0, 9, 18, 27]
    assert all(s.size <= config.segment_bytes for s in log.segments())
    info = log.read(4, 10**6)
    assert len(info.regions) == 4 and info.first_offset == 3
    assert info.size == batch_size * 9
    assert [h.base_offset for _, h in iter_batches(b"".join(r.read() for r in info.regions))] == [
        3 * i for i in range(1, 10)
    ]
    assert [h.base_offset for h in log.iter_batch_headers(10)] == [9 + 3 * i for i in range(7)]
    # a batch of exactly segment.bytes still fits a segment of its own
    exact = make_batch(3, value_size=batch_size * 4)
    log.update_config(LogConfig.from_properties({"segment.bytes": str(len(exact))}))
    log.append_as_leader(exact, 0)
    assert log.segments()[-1].size == len(exact)


def test_append_larger_than_segment_bytes_is_refused(tmp_path: Path) -> None:
    """Kafka's UnifiedLog.append: RECORD_LIST_TOO_LARGE, nothing appended, for the whole
    append (several batches together too) and for a follower's append as well."""
    rolls: list[int] = []
    batch = make_batch(3)
    limit = 2 * len(batch)
    config = LogConfig.from_properties({"segment.bytes": str(limit)})
    log = LocalLog.open(tmp_path / "t-0", config, rolls.append, clock=Clock())
    log.append_as_leader(bytearray(batch), 0)
    for records in (make_batch(3, value_size=3 * len(batch)), batch * 3):
        with pytest.raises(RecordListTooLargeError, match=rf"t-0, which exceeds .* of {limit}\."):
            log.append_as_leader(bytearray(records), 0)
    assert (log.log_end_offset, log.active_segment.size, rolls) == (3, len(batch), [])
    leader = open_log(tmp_path / "leader")
    leader.append_as_leader(bytearray(batch * 4), 0)
    with pytest.raises(RecordListTooLargeError):
        log.append_as_follower(read_all(leader)[len(batch) :])  # offsets 3-11: 3 batches
    assert log.log_end_offset == 3
    log.append_as_leader(bytearray(batch * 2), 0)  # exactly segment.bytes: rolled, appended
    assert (log.log_end_offset, rolls) == (9, [3])
    assert [h.base_offset for h in log.iter_batch_headers()] == [0, 3, 6]


def test_read_never_skips_a_segment_whose_batch_does_not_fit(tmp_path: Path) -> None:
    # segments [small][big][small]: a budget left after the first that is too small for the
    # big batch must end the read there, not jump to the small batch of the third segment
    small_size = len(make_batch(3))
    big = make_batch(3, value_size=small_size * 4)
    log = open_log(tmp_path / "t-0", segment_bytes=str(len(big)))  # one batch a segment
    log.append_as_leader(make_batch(3, seed=1), 0)
    log.append_as_leader(big, 0)
    log.append_as_leader(make_batch(3, seed=2), 0)
    assert [s.base_offset for s in log.segments()] == [0, 3, 6]
    info = log.read(0, small_size * 3)
    assert [(read_header(r.read()).base_offset, r.length) for r in info.regions] == [
        (0, small_size)
    ]
    # not the first partition of a response (min_one_batch False): nothing, not offset 6
    assert log.read(3, small_size * 3, min_one_batch=False).regions == []
    assert log.read(3, small_size * 3).size == len(big)  # the first batch always goes whole
    assert read_header(log.read(6, small_size).regions[0].read()).base_offset == 6


def test_maybe_roll_by_segment_ms(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, segment_ms="1000")
    assert not log.maybe_roll(clock.now + 5000)  # empty active segment never rolls
    log.append_as_leader(make_batch(), 0)
    assert not log.maybe_roll(clock.now + 999)
    assert log.maybe_roll(clock.now + 1000)
    assert [s.base_offset for s in log.segments()] == [0, 3]
    clock.now += 5000
    log.append_as_leader(make_batch(timestamp=clock.now), 0)  # into the empty segment
    clock.now += 5000
    log.append_as_leader(make_batch(timestamp=clock.now), 0)  # 5 s of record time: rolled
    assert [s.base_offset for s in log.segments()] == [0, 3, 6]


def test_max_compaction_lag_rolls_a_compacted_log(tmp_path: Path) -> None:
    """Kafka's maxSegmentMs: on a compacted log the active segment (never cleaned) is rolled
    after max.compaction.lag.ms when that is shorter than segment.ms; other logs ignore it."""
    clock = Clock()
    log = open_log(tmp_path / "c-0", clock, cleanup_policy="compact", max_compaction_lag_ms="1000")
    plain = open_log(tmp_path / "d-0", clock, max_compaction_lag_ms="1000")
    for each in (log, plain):
        each.append_as_leader(make_batch(), 0)
    assert not log.maybe_roll(clock.now + 999)
    assert log.maybe_roll(clock.now + 1000) and not plain.maybe_roll(clock.now + 1000)
    clock.now += 1000
    log.append_as_leader(make_batch(timestamp=clock.now), 0)
    clock.now += 1001
    log.append_as_leader(make_batch(timestamp=clock.now), 0)  # rolled before this append
    assert [s.base_offset for s in log.segments()] == [0, 3, 6]
    assert [s.base_offset for s in plain.segments()] == [0]


def test_a_reopened_segment_keeps_its_age_for_segment_ms(tmp_path: Path) -> None:
    """Kafka's rollingBasedTimestamp: a restart does not restart segment.ms; the reopened
    active segment is dated by its first batch (unless that lies in the future)."""
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, segment_ms="10000")
    log.append_as_leader(make_batch(timestamp=clock.now), 0)  # first batch max: now + 2
    future = open_log(tmp_path / "f-0", clock, segment_ms="10000")
    future.append_as_leader(make_batch(timestamp=clock.now + 60_000), 0)
    log.close()
    future.close()
    clock.now += 6000  # the broker restarts 6 s later
    log = open_log(tmp_path / "t-0", clock, segment_ms="10000")
    future = open_log(tmp_path / "f-0", clock, segment_ms="10000")
    assert not log.maybe_roll(clock.now + 4001)
    assert log.maybe_roll(clock.now + 4002)  # 10 s after its first record
    assert not future.maybe_roll(clock.now + 9999)
    assert future.maybe_roll(clock.now + 10_000)  # 10 s after it was reopened
    log.close()
    future.close()


def test_corrupt_batch_rejected_and_log_usable(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(make_batch(), 0)
    bad = make_batch(seed=1)
    bad[-1] ^= 0xFF
    good = make_batch(seed=2)
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(good + bad, 0)
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(make_batch()[:-5], 0)
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(bytearray(), 0)
    assert log.log_end_offset == 3
    log.append_as_leader(make_batch(seed=3), 0)
    assert len(iter_batches(read_all(log))) == 2


def test_message_too_large(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", max_message_bytes="200")
    with pytest.raises(MessageTooLargeError):
        log.append_as_leader(make_batch(value_size=300), 0)
    assert log.log_end_offset == 0


def test_enospc_truncates_partial_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes="10")
    for i in range(3):
        log.append_as_leader(make_batch(seed=i), 0)
    size_before = log.active_segment.size
    index_before = log.active_segment.offset_index.entries()
    real_pwrite = os.pwrite

    def failing_pwrite(fd: int, data: memoryview, offset: int) -> int:
        if len(data) > 50:  # write a little, then the disk is full
            return real_pwrite(fd, data[:50], offset)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", failing_pwrite)
    with pytest.raises(KafkaStorageError):
        log.append_as_leader(make_batch(seed=9) + make_batch(seed=10), 0)
    monkeypatch.setattr(os, "pwrite", real_pwrite)
    assert log.active_segment.size == size_before
    assert log.active_segment.log_path.stat().st_size == size_before
    assert log.active_segment.offset_index.entries() == index_before
    assert log.log_end_offset == 9
    log.append_as_leader(make_batch(seed=4), 0)
    assert [h.base_offset for _, h in iter_batches(read_all(log))] == [0, 3, 6, 9]
    log.close()
    reopened = open_log(tmp_path / "t-0")
    assert reopened.log_end_offset == 12


def test_index_write_failure_rolls_back_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes="10")
    log.append_as_leader(make_batch(seed=0), 0)

    def failing_write(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(KafkaStorageError):
        log.append_as_leader(make_batch(seed=1), 0)
    monkeypatch.undo()
    assert log.log_end_offset == 3
    assert log.active_segment.log_path.stat().st_size == log.active_segment.size
    assert len(iter_batches(read_all(log))) == 1


def test_truncate_to(tmp_path: Path) -> None:
    batch_size = len(make_batch(3))
    log = open_log(tmp_path / "t-0", segment_bytes=str(batch_size * 2))
    for i in range(8):
        log.append_as_leader(make_batch(3, seed=i), 0)
    assert len(log.segments()) == 4
    log.truncate_to(13)  # inside the batch 12..14: that batch goes too
    assert log.log_end_offset == 12
    assert [s.base_offset for s in log.segments()] == [0, 6, 12]
    assert log.segments()[-1].size == 0
    log.truncate_to(7)
    assert log.log_end_offset == 6
    assert [s.base_offset for s in log.segments()] == [0, 6]
    assert not list((tmp_path / "t-0").glob("*.deleted"))
    log.append_as_leader(make_batch(3, seed=20), 3)
    assert [h.base_offset for _, h in iter_batches(read_all(log))] == [0, 3, 6]
    log.close()
    reopened = open_log(tmp_path / "t-0", segment_bytes=str(batch_size * 2))
    assert reopened.log_end_offset == 9
    reopened.truncate_to(0)
    assert reopened.log_end_offset == 0 and len(reopened.segments()) == 1
    reopened.append_as_leader(make_batch(), 0)
    assert reopened.log_end_offset == 3


def test_append_as_follower_keeps_offsets(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "leader")
    for i in range(3):
        leader.append_as_leader(make_batch(seed=i), 4)
    data = read_all(leader)
    follower = open_log(tmp_path / "follower")
    info = follower.append_as_follower(data)
    assert (info.first_offset, info.last_offset) == (0, 8)
    assert read_all(follower) == data
    with pytest.raises(UnexpectedAppendOffsetError):
        follower.append_as_follower(data)
    assert follower.log_end_offset == 9


def test_log_append_time(tmp_path: Path) -> None:
    clock = Clock(5_000_000)
    log = open_log(tmp_path / "t-0", clock, message_timestamp_type="LogAppendTime")
    info = log.append_as_leader(make_batch(timestamp=10), 0)
    assert info.log_append_time_ms == 5_000_000 and info.max_timestamp == 5_000_000
    header = validate_batch(read_all(log))
    assert header.is_log_append_time and header.max_timestamp == 5_000_000
    assert log.offset_for_timestamp(4_999_999) == (0, 5_000_000)


def test_timestamp_bounds(tmp_path: Path) -> None:
    """message.timestamp.before/after.max.ms refuse a CreateTime batch (INVALID_TIMESTAMP),
    nothing appended; a batch without timestamps (-1) has none to judge (Kafka)."""
    clock = Clock(5_000_000)
    bounds = {"message_timestamp_before_max_ms": "1000", "message_timestamp_after_max_ms": "1000"}
    log = open_log(tmp_path / "t-0", clock, **bounds)
    for ts in (5_000_000 - 1001, 5_000_000 + 1001):
        with pytest.raises(InvalidTimestampError):
            log.append_as_leader(make_batch(1, timestamp=ts), 0)
    assert log.log_end_offset == 0
    log.append_as_leader(make_batch(1, timestamp=5_000_000 - 1000), 0)
    log.append_as_leader(bytearray(encode_batch([(b"k", b"v", [], -1)])), 0)
    assert log.log_end_offset == 2


def test_default_refuses_timestamps_more_than_an_hour_ahead(tmp_path: Path) -> None:
    """Kafka 4.0 (KIP-1030) defaults message.timestamp.after.max.ms to one hour; the past
    stays unbounded (before.max.ms is Long.MAX_VALUE)."""
    hour = 3_600_000
    clock = Clock(5_000_000_000)
    log = open_log(tmp_path / "t-0", clock)
    with pytest.raises(InvalidTimestampError):
        log.append_as_leader(make_batch(1, timestamp=5_000_000_000 + hour + 1), 0)
    log.append_as_leader(make_batch(1, timestamp=5_000_000_000 + hour), 0)
    log.append_as_leader(make_batch(1, timestamp=0), 0)
    assert log.log_end_offset == 2


def test_offset_for_timestamp(tmp_path: Path) -> None:
    batch_size = len(make_batch(3))
    log = open_log(tmp_path / "t-0", segment_bytes=str(batch_size * 3), index_interval_bytes="50")
    for i in range(10):
        log.append_as_leader(make_batch(3, timestamp=1000 + 10 * i), 0)  # ts 1000+10i+{0,1,2}
    assert log.offset_for_timestamp(0) == (0, 1000)
    assert log.offset_for_timestamp(1001) == (1, 1001)
    assert log.offset_for_timestamp(1003) == (3, 1010)
    assert log.offset_for_timestamp(1052) == (17, 1052)
    assert log.offset_for_timestamp(1092) == (29, 1092)
    assert log.offset_for_timestamp(1093) is None


def test_offset_for_timestamp_skips_records_below_the_log_start_offset(tmp_path: Path) -> None:
    """After DeleteRecords the lookup answers offsets at or above the log start offset only
    (Kafka's findOffsetByTimestamp), even when the log start lies inside a batch."""
    batch_size = len(make_batch(3))
    log = open_log(tmp_path / "t-0", segment_bytes=str(batch_size * 3), index_interval_bytes="50")
    for i in range(10):
        log.append_as_leader(make_batch(3, timestamp=1000 + 10 * i), 0)  # ts 1000+10i+{0,1,2}
    log.set_log_start_offset(4)  # inside the second batch (offsets 3-5)
    assert log.offset_for_timestamp(0) == (4, 1011)
    assert log.offset_for_timestamp(1001) == (4, 1011)
    assert log.offset_for_timestamp(1012) == (5, 1012)
    log.set_log_start_offset(10)  # a later segment
    assert log.offset_for_timestamp(0) == (10, 1031)
    assert log.offset_for_timestamp(1092) == (29, 1092)
    assert log.offset_for_timestamp(1093) is None


def test_log_append_time_lookup_from_inside_a_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", Clock(5_000_000), message_timestamp_type="LogAppendTime")
    log.append_as_leader(make_batch(3, timestamp=10), 0)
    log.set_log_start_offset(2)
    assert log.offset_for_timestamp(0) == (2, 5_000_000)


def test_offset_of_max_timestamp_finds_the_first_record_with_it(tmp_path: Path) -> None:
    batch_size = len(make_batch(3))
    log = open_log(tmp_path / "t-0", segment_bytes=str(batch_size * 2), index_interval_bytes="50")
    assert log.offset_of_max_timestamp() is None  # empty log
    # timestamps out of order across segments; 5002 first at offset 5, again at offset 11
    for ts in (1000, 5000, 3000, 5000, 2000):
        log.append_as_leader(make_batch(3, timestamp=ts), 0)
    assert len(log.segments()) >= 3
    assert log.offset_of_max_timestamp() == (5, 5002)


def test_flush_messages_advances_recovery_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncs: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: syncs.append(fd) or real(fd))
    log = open_log(tmp_path / "t-0", flush_messages="5")
    log.append_as_leader(make_batch(3), 0)
    assert log.recovery_point == 0 and not syncs
    log.append_as_leader(make_batch(3), 0)
    assert log.recovery_point == 6 and len(syncs) == 1
    default = open_log(tmp_path / "t-1")
    for _ in range(10):
        default.append_as_leader(make_batch(3), 0)
    assert default.recovery_point == 0 and len(syncs) == 1  # left to the OS
    default.flush()
    assert default.recovery_point == 30


def test_flush_ms(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, flush_ms="100")
    log.append_as_leader(make_batch(3), 0)
    assert log.recovery_point == 0
    assert not log.maybe_flush(clock.now + 50)
    assert log.maybe_flush(clock.now + 100)
    assert log.recovery_point == 3
    clock.now += 1000
    log.append_as_leader(make_batch(3), 0)  # 1000 ms since the last flush: flushed on append
    assert log.recovery_point == 6


def test_reopen_after_close_restores_state(tmp_path: Path) -> None:
    batch_size = len(make_batch(3))
    props = {"segment_bytes": str(batch_size * 4), "index_interval_bytes": "100"}
    log = open_log(tmp_path / "t-0", **props)
    for i in range(15):
        log.append_as_leader(make_batch(3, seed=i, timestamp=100 * i), 2)
    data = read_all(log)
    indexes = [(s.offset_index.entries(), s.time_index.entries()) for s in log.segments()]
    log.close()
    reopened = open_log(tmp_path / "t-0", **props)
    assert reopened.log_end_offset == 45 and reopened.recovery_point == 45
    assert read_all(reopened) == data
    assert [(s.offset_index.entries(), s.time_index.entries()) for s in reopened.segments()] == (
        indexes
    )
    assert reopened.offset_for_timestamp(1050) == (33, 1100)


def test_real_full_disk_on_tmpfs(tmp_path: Path) -> None:
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0 or os.system(f"mount -t tmpfs -o size=1m tmpfs {mount} 2>/dev/null"):
        pytest.skip("needs root to mount a 1 MiB tmpfs")
    try:
        log = open_log(mount / "t-0", index_interval_bytes="512")
        appended = 0
        with pytest.raises(KafkaStorageError):
            for i in range(1000):
                log.append_as_leader(make_batch(10, value_size=1000, seed=i % 10), 0)
                appended += 1
        assert appended > 10
        assert log.log_end_offset == appended * 10
        assert log.active_segment.log_path.stat().st_size == log.active_segment.size
        assert len(iter_batches(read_all(log))) == appended
        log.active_segment.close()
        reopened = open_log(mount / "t-0", index_interval_bytes="512")
        assert reopened.log_end_offset == appended * 10
        reopened.active_segment.close()
    finally:
        os.system(f"umount -l {mount}")


def test_roll_fsyncs_the_rolled_segments_log_and_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rolled segment lies below the recovery point, which recovery trusts without a scan,
    so its .log, .index and .timeindex are fsynced by the roll itself (the index handles were
    closed before the flush, and their entries were never fsynced)."""
    synced: list[str] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def record(fd: int, real: object = real) -> None:
            synced.append(Path(f"/proc/self/fd/{fd}").readlink().name)
            real(fd)  # type: ignore[operator]

        monkeypatch.setattr(os, name, record)
    log = open_log(tmp_path / "t-0", segment_bytes="100000", index_interval_bytes="1")
    for i in range(3):
        log.append_as_leader(make_batch(3, seed=i), 0)
    synced.clear()
    log.roll()
    rolled = "00000000000000000000"
    assert {f"{rolled}.log", f"{rolled}.index", f"{rolled}.timeindex"} <= set(synced)
