"""Recovery rebuilds the ``.txnindex`` entries of the segments it re-reads, and the recovery
point never passes a segment whose ``.txnindex`` is not on disk (Kafka's LogLoader rebuilds
the transaction index of every segment past the recovery point; its flush fsyncs it).

A ``.txnindex`` write is made to fail for real by a directory at its path (the append's
``open`` is refused, as ENOSPC refuses it on a full disk: tests/integration/
test_txnindex_recovery_disk_full.py causes that one)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.broker.txn.test_partition_txn import open_partition, produce
from tiered_mq.broker.partition import Partition
from tiered_mq.broker.producer_state import snapshot_path
from tiered_mq.errors import KafkaStorageError
from tiered_mq.hot import log_files
from tiered_mq.hot.transaction_index import AbortedTxn, TransactionIndex

SEGMENT = {"segment.bytes": "400"}


def _checkpointed_recovery_point(dir: Path) -> int:
    """The recovery point the next open starts from (an absent checkpoint reads as 0)."""
    return log_files.read_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT) or 0


async def _roll(p: Partition, pid: int, seq: int) -> int:
    """Committed transactions until the active segment rolls; returns the next sequence."""
    segments = len(p.log.segments())
    while len(p.log.segments()) == segments:
        await produce(p, pid=pid, seq=seq, txn=True)
        await p.append_txn_marker(pid, 0, commit=True, coordinator_epoch=0)
        seq += 2
    return seq


async def test_an_abort_whose_index_write_failed_is_restored_after_a_roll_and_restart(
    tmp_path: Path,
) -> None:
    p = open_partition(tmp_path, **SEGMENT)
    seq = await _roll(p, 3, 0)
    base = p.log.active_segment.base_offset
    first = await produce(p, pid=1, seq=0, txn=True)  # aborted below
    open_first = await produce(p, pid=2, seq=0, txn=True)  # still open at the abort
    index = TransactionIndex(tmp_path, base)
    index.path.mkdir()  # the append's open fails
    marker = p.log_end_offset
    with pytest.raises(KafkaStorageError):
        await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    assert p.log_end_offset == marker + 1 and p.log.active_segment.base_offset == base
    aborted = [AbortedTxn(1, first, marker, open_first)]
    assert p.aborted_transactions(0, 1000) == aborted  # in memory, reads stay right
    index.path.rmdir()  # the disk recovers; the entry is still missing from the file
    await p.append_txn_marker(2, 0, commit=True, coordinator_epoch=0)
    await _roll(p, 3, await _roll(p, 3, seq))
    assert len(p.log.segments()) == 4
    assert p.log.recovery_point == base  # held at the segment whose .txnindex lacks it
    p.close()
    assert _checkpointed_recovery_point(tmp_path) == base
    assert index.entries() == []

    p = open_partition(tmp_path, **SEGMENT)
    assert p.aborted_transactions(0, 1000) == aborted
    assert index.entries() == aborted  # restored on disk
    p.close()
    assert _checkpointed_recovery_point(tmp_path) == p.log_end_offset  # no longer held back


async def test_entries_lost_past_the_recovery_point_are_restored_from_the_markers(
    tmp_path: Path,
) -> None:
    """Killed after aborts in the active segment; the restart's recovery snapshots the producer
    state at the log end (fsynced); then a power failure takes the unsynced .txnindex entries.
    That snapshot is past their markers, but the recovery point is not: the next open re-reads
    the segment and restores them, in marker order."""
    props = {"segment.bytes": "2000"}
    p = open_partition(tmp_path, **props)
    await produce(p)
    seq = await _roll(p, 3, 0)
    base = p.log.active_segment.base_offset
    for i in range(3):
        await produce(p, pid=1, seq=2 * i, txn=True)
        await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    await produce(p, pid=3, seq=seq, txn=True)
    await p.append_txn_marker(3, 0, commit=True, coordinator_epoch=0)
    expected = p.aborted_transactions(0, 1000)
    assert len(expected) == 3 and p.log.active_segment.base_offset == base
    del p  # killed: no flush, no shutdown snapshot

    restarted = open_partition(tmp_path, **props)
    assert restarted.aborted_transactions(0, 1000) == expected
    assert snapshot_path(tmp_path, restarted.log_end_offset).exists()
    assert restarted.log.recovery_point < restarted.log_end_offset
    del restarted  # killed again
    index = TransactionIndex(tmp_path, base)
    index.path.write_bytes(expected[1].encode())  # the power failure: two entries lost

    p = open_partition(tmp_path, **props)
    assert p.aborted_transactions(0, 1000) == expected
    assert index.entries() == expected
    p.close()


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the files fsynced from now on (os.fsync and os.fdatasync)."""
    synced: list[str] = []

    def recording(sync: Callable[[int], None]) -> Callable[[int], None]:
        def call(fd: int) -> None:
            synced.append(str(Path(f"/proc/self/fd/{fd}").readlink()))
            sync(fd)

        return call

    monkeypatch.setattr(os, "fdatasync", recording(os.fdatasync))
    monkeypatch.setattr(os, "fsync", recording(os.fsync))
    return synced


async def test_a_roll_fsyncs_the_txn_index_before_the_recovery_point_passes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = open_partition(tmp_path, **SEGMENT)
    await produce(p, pid=1, seq=0, txn=True)
    await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    synced = _record_fsyncs(monkeypatch)
    await _roll(p, 3, 0)
    assert p.log.recovery_point > 0
    assert str(TransactionIndex(tmp_path, 0).path) in synced
    p.close()


async def test_an_abort_whose_marker_append_flushed_fsyncs_its_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flush.messages=1: the marker's append flushes and moves the recovery point past it
    before the entry is written; the entry is fsynced at once."""
    p = open_partition(tmp_path, **{"flush.messages": "1"})
    await produce(p, pid=1, seq=0, txn=True)
    synced = _record_fsyncs(monkeypatch)
    marker = await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    assert p.log.recovery_point > marker
    assert str(TransactionIndex(tmp_path, 0).path) in synced
    p.close()
