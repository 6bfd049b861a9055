"""Partition side of transactions: LSO, ABORT markers in .txnindex, snapshots and recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.broker.producer_state import list_snapshots, snapshot_path
from tiered_mq.errors import InvalidProducerEpochError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.transaction_index import AbortedTxn, TransactionIndex
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("t", 0)


def open_partition(dir: Path, **props: str) -> Partition:
    """Records are stamped 1000 (1970), markers with the wall clock: segment.ms, which counts
    record time, is set beyond that gap so only segment.bytes rolls (unless a test sets it)."""
    return Partition.open(TP, dir, LogConfig.from_properties({"segment.ms": str(10**15), **props}))


async def produce(
    p: Partition, pid: int = -1, seq: int = -1, txn: bool = False, n: int = 2, epoch: int = 0
) -> int:
    buf = bytearray(
        encode_batch(
            [(b"k", b"v%d" % i, (), 1000) for i in range(n)],
            producer_id=pid,
            producer_epoch=epoch if pid >= 0 else -1,
            base_sequence=seq,
            is_transactional=txn,
        )
    )
    return (await p.append_as_leader(buf, validate_records(buf, 1 << 20))).base_offset


async def test_lso_follows_ongoing_transactions_and_aborts_are_indexed(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p)  # 0-1 plain
    assert p.last_stable_offset == 2
    await produce(p, pid=1, seq=0, txn=True)  # 2-3 txn of producer 1
    await produce(p, pid=2, seq=0, txn=True)  # 4-5 txn of producer 2
    await produce(p)  # 6-7 plain: held back too
    assert p.high_watermark == 8 and p.last_stable_offset == 2
    assert await p.append_txn_marker(1, 0, commit=True, coordinator_epoch=0) == 8
    assert p.last_stable_offset == 4
    assert p.aborted_transactions(0, 100) == []
    assert await p.append_txn_marker(2, 0, commit=False, coordinator_epoch=0) == 9
    assert p.last_stable_offset == p.high_watermark == 10
    aborted = [AbortedTxn(2, 4, 9, 10)]
    assert p.aborted_transactions(0, 10) == aborted
    assert p.aborted_transactions(10, 20) == []
    assert TransactionIndex(tmp_path, 0).entries() == aborted
    # a zombie coordinator's marker with an older epoch is refused
    await produce(p, pid=3, seq=0, txn=True)
    p.producer_state.producers[3].epoch = 4
    with pytest.raises(InvalidProducerEpochError):
        await p.append_txn_marker(3, 2, commit=False, coordinator_epoch=0)
    p.close()


async def test_open_transaction_survives_a_clean_restart(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=1, seq=0, txn=True)  # 0-1
    await produce(p)  # 2-3
    p.close()  # snapshot at 4 carries the ongoing transaction's first offset
    assert list_snapshots(tmp_path) == [4]
    p = open_partition(tmp_path)
    assert p.producer_state.ongoing == {1: 0}
    assert p.last_stable_offset == 0
    await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    assert p.last_stable_offset == 5
    p.close()


async def test_recovery_rebuilds_lost_index_entries_from_the_log(tmp_path: Path) -> None:
    p = open_partition(tmp_path, **{"segment.bytes": "300"})
    for i in range(4):
        await produce(p, pid=1, seq=2 * i, txn=True)
        await p.append_txn_marker(1, 0, commit=i % 2 == 0, coordinator_epoch=0)
    await produce(p, pid=1, seq=8, txn=True)  # left open
    expected = p.aborted_transactions(0, 1000)
    assert [(e.first_offset, e.last_offset) for e in expected] == [(3, 5), (9, 11)]
    assert len(p.log.segments()) > 1
    p.log.close()  # a crash: no shutdown snapshot, and the index files are lost
    for f in tmp_path.glob("*.txnindex"):  # noqa: ASYNC240
        f.unlink()
    for off in list_snapshots(tmp_path):
        snapshot_path(tmp_path, off).unlink()
    p = open_partition(tmp_path, **{"segment.bytes": "300"})
    assert p.aborted_transactions(0, 1000) == expected
    assert p.producer_state.ongoing == {1: 12}
    assert p.last_stable_offset == 12
    assert sum(len(TransactionIndex(tmp_path, s.base_offset).entries()) for s in p.log.segments())
    p.close()


async def test_index_entries_past_a_truncated_log_are_dropped(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=1, seq=0, txn=True)
    await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)  # marker at 2
    p.close()
    TransactionIndex(tmp_path, 0).append(AbortedTxn(9, 50, 60, 61))  # beyond the log end
    p = open_partition(tmp_path)
    assert [e.producer_id for e in p.aborted_transactions(0, 1000)] == [1]
    assert [e.producer_id for e in TransactionIndex(tmp_path, 0).entries()] == [1]
    p.close()


async def test_aborts_below_the_local_log_start_leave_memory(tmp_path: Path) -> None:
    """With retention -1 on a tiered topic only local retention deletes segments: the entries
    of aborts whose markers were in them are dropped (the bucket's .txnindex holds them)."""
    props = {"segment.bytes": "300", "retention.ms": "-1", "remote.storage.enable": "true"}
    p = open_partition(tmp_path, **props)
    for i in range(6):
        await produce(p, pid=1, seq=2 * i, txn=True)
        await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
    everything = p.aborted_transactions(0, 1000)
    assert len(everything) == 6
    deleted = p.log.delete_segments(lambda s: s.base_offset < 9)
    assert deleted and p.log.log_start_offset == 0  # the bucket still holds them
    start = p.log.local_log_start_offset
    kept = [e for e in everything if e.last_offset >= start]
    assert 0 < len(kept) < 6
    assert p.aborted_transactions(0, 1000) == kept
    assert p.txns._known == {(e.producer_id, e.last_offset) for e in kept}
    p.close()
    p = open_partition(tmp_path, **props)  # as a restart finds them
    assert p.aborted_transactions(0, 1000) == kept
    p.close()
