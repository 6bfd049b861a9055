"""The cold tier never uploads a segment whose ``.txnindex`` lacks an aborted transaction's
entry (a write that failed: a directory at its path refuses the append's ``open``, as a full
disk refuses it with ENOSPC). Before, the rolled segment went to the bucket without the entry:
once local retention deleted it, a read_committed fetch from the bucket (and Spark, which reads
the bucket alone) returned the aborted records, and no restart could rebuild it. Now it waits;
the restart's recovery restores the entry from the log's ABORT marker, and the segment is then
uploaded with it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.partition import Partition
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.errors import KafkaStorageError
from tiered_mq.hot.transaction_index import AbortedTxn, TransactionIndex
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("t", 0)
COLD = "memory://txnindex-upload/prefix"
INTERVAL = {"remote.log.manager.task.interval.ms": "10"}


async def _start(data_dir: Path) -> tuple[Broker, RemoteLogManager]:
    broker = await start_broker(data_dir, cold_url=COLD, **INTERVAL)
    rlm = broker.remote_log_manager
    assert rlm is not None
    return broker, rlm


async def _roll(p: Partition) -> int:
    """Roll the active segment; returns the base offset of the one rolled."""
    async with p.lock:
        base = p.log.active_segment.base_offset
        p.log.roll()
    return base


def _uploaded(rlm: RemoteLogManager) -> list[int]:
    uploader = rlm.uploader(TP)
    return [] if uploader is None else [s.base_offset for s in uploader.manifest.segments]


async def _until_uploaded(rlm: RemoteLogManager, bases: list[int]) -> None:
    for _ in range(500):
        if _uploaded(rlm) == bases:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"uploaded {_uploaded(rlm)}, not {bases}")


async def test_a_segment_missing_an_abort_entry_is_uploaded_only_once_restored(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    broker, rlm = await _start(data_dir)
    try:
        configs = {"remote.storage.enable": "true", "retention.ms": "-1", "segment.ms": str(10**15)}
        await broker.topic_registry.create_topic("t", 1, configs)
        p = broker.replica_manager.get_partition(TP)
        await produce(p, pid=1, seq=0, txn=True)
        await p.append_txn_marker(1, 0, commit=True, coordinator_epoch=0)
        first = await _roll(p)
        await _until_uploaded(rlm, [first])

        aborted_first = await produce(p, pid=1, seq=2, txn=True)
        failed = p.log.active_segment.base_offset
        index = TransactionIndex(p.log.dir, failed)
        index.path.mkdir()
        with pytest.raises(KafkaStorageError):
            marker = p.log_end_offset
            await p.append_txn_marker(1, 0, commit=False, coordinator_epoch=0)
        index.path.rmdir()
        aborted = AbortedTxn(1, aborted_first, marker, marker + 1)
        assert await _roll(p) == failed
        await produce(p, pid=1, seq=4, txn=True)
        await p.append_txn_marker(1, 0, commit=True, coordinator_epoch=0)
        later = await _roll(p)
        await asyncio.sleep(0.5)  # ~50 uploader passes
        assert _uploaded(rlm) == [first]  # not the segment whose .txnindex lacks the entry
    finally:
        await broker.close()

    broker, rlm = await _start(data_dir)
    try:
        assert index.entries() == [aborted]  # restored by recovery
        await _until_uploaded(rlm, [first, failed, later])
        assert await rlm.aborted_transactions(TP, 0, later) == [aborted]
    finally:
        await broker.close()
