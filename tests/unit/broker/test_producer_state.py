"""ProducerStateManager: Kafka's idempotence rules, snapshots and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker.producer_state import (
    ProducerStateManager,
    list_snapshots,
    snapshot_path,
)
from tiered_mq.errors import InvalidProducerEpochError, OutOfOrderSequenceNumberError
from tiered_mq.record.batch import read_header
from tiered_mq.record.records import encode_batch


def header(pid: int, epoch: int, seq: int, count: int = 3, base_offset: int = 0):  # type: ignore[no-untyped-def]
    buf = encode_batch(
        [(b"k", b"v", [], 1000 + i) for i in range(count)],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        base_offset=base_offset,
    )
    return read_header(buf)


def test_in_sequence_batches_are_accepted(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    offset = 0
    for seq in (0, 3, 6):
        h = header(7, 0, seq)
        assert ps.check(h) is None
        ps.update(h, offset)
        offset += 3
    assert ps.producers[7].last_seq == 8
    assert ps.map_end_offset == 9


def test_duplicate_batch_answers_original_offsets(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 100)
    ps.update(header(7, 0, 3), 103)
    dup = ps.check(header(7, 0, 0))
    assert dup is not None and (dup.first_offset, dup.last_offset) == (100, 102)
    dup = ps.check(header(7, 0, 3))
    assert dup is not None and dup.first_offset == 103


def test_only_last_five_batches_are_remembered(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    for i in range(6):
        ps.update(header(7, 0, i * 3), i * 3)
    with pytest.raises(OutOfOrderSequenceNumberError):
        ps.check(header(7, 0, 0))  # evicted: no longer a known duplicate, and out of order
    assert ps.check(header(7, 0, 3)) is not None


def test_sequence_gap_is_out_of_order(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 0)
    with pytest.raises(OutOfOrderSequenceNumberError):
        ps.check(header(7, 0, 5))


def test_stale_epoch_is_fenced(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 2, 0), 0)
    with pytest.raises(InvalidProducerEpochError):
        ps.check(header(7, 1, 3))


def test_new_epoch_must_start_at_zero(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 0)
    with pytest.raises(OutOfOrderSequenceNumberError):
        ps.check(header(7, 1, 3))
    assert ps.check(header(7, 1, 0)) is None


def test_sequence_wraps_at_int32_max(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 2**31 - 1, count=1), 0)
    assert ps.check(header(7, 0, 0)) is None


def test_unknown_producer_and_non_idempotent_batches_pass(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    assert ps.check(header(9, 0, 42)) is None
    assert ps.check(header(-1, -1, -1)) is None


def test_snapshot_round_trip_and_replay(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 0)
    ps.update(header(8, 3, 10), 3)
    path = ps.take_snapshot()
    assert path == snapshot_path(tmp_path, 6)

    loaded = ProducerStateManager(tmp_path)
    assert loaded.load_latest_snapshot(log_end_offset=9) == 6
    assert loaded.producers[8].epoch == 3
    assert loaded.check(header(8, 3, 10)) is not None  # duplicate detection survives
    loaded.replay([header(7, 0, 3, base_offset=6)])
    assert loaded.producers[7].last_seq == 5
    assert loaded.map_end_offset == 9


def test_corrupt_snapshot_falls_back_to_older(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 0)
    ps.take_snapshot(3)
    ps.update(header(7, 0, 3), 3)
    newest = ps.take_snapshot(6)
    data = bytearray(newest.read_bytes())
    data[-1] ^= 0xFF
    newest.write_bytes(bytes(data))
    loaded = ProducerStateManager(tmp_path)
    assert loaded.load_latest_snapshot(10) == 3
    assert loaded.producers[7].last_seq == 2


def test_snapshots_beyond_log_end_are_deleted(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.take_snapshot(5)
    ps.take_snapshot(50)
    loaded = ProducerStateManager(tmp_path)
    assert loaded.load_latest_snapshot(10) == 5
    assert list_snapshots(tmp_path) == [5]


def test_delete_snapshots_before_deletes_every_one_below(tmp_path: Path) -> None:
    """Kafka's deleteSnapshotsBefore: none below the offset is kept (one was, as a replay
    base, though the records after it were gone)."""
    ps = ProducerStateManager(tmp_path)
    for off in (10, 20, 30, 40):
        ps.take_snapshot(off)
    ps.delete_snapshots_before(35)
    assert list_snapshots(tmp_path) == [40]
    ps.delete_snapshots_before(40)
    assert list_snapshots(tmp_path) == [40]


def test_check_all_follows_sequences_within_one_append(tmp_path: Path) -> None:
    ps = ProducerStateManager(tmp_path)
    ps.update(header(7, 0, 0), 0)
    assert ps.check_all([header(7, 0, 3), header(7, 0, 6), header(8, 0, 0)]) is None
    with pytest.raises(OutOfOrderSequenceNumberError):
        ps.check_all([header(7, 0, 3), header(7, 0, 9)])
    dup = ps.check_all([header(7, 0, 0), header(7, 0, 3)])
    assert dup is not None and dup.first_offset == 0
