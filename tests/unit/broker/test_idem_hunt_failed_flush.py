"""A batch in the log whose flush then failed is recorded in the producer state (as Kafka's
UnifiedLog.append does before its flush), so the producer's retry is answered as a duplicate
with the original offsets instead of being written a second time.

The fault is caused for real: the partition lives on a tmpfs whose inodes run out. With
``flush.messages=1`` every append is flushed, and a flush a minute after the last checkpoint
also rewrites the checkpoint files, which needs a new file: the append's batch is already in
the segment when the flush fails (KAFKA_STORAGE_ERROR, which producers retry). A COMMIT/ABORT
marker is the same: the coordinator retries it, and the first one already ended the transaction.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.tmpfs import mounted_tmpfs
from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.partition import Partition
from tiered_mq.errors import KafkaStorageError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_durability import CHECKPOINT_INTERVAL_MS
from tiered_mq.topic_partition import TopicPartition

PID = 7


@contextlib.contextmanager
def no_inode_left(p: Partition) -> Iterator[None]:
    """Every free inode of ``p``'s filesystem taken by empty files, given back after; a minute
    later on the log's clock, so that its next flush rewrites the checkpoint files."""
    clock = p.log.clock
    p.log.clock = lambda: clock() + CHECKPOINT_INTERVAL_MS
    directory = p.log.dir.parent / "ballast"
    directory.mkdir()
    with contextlib.suppress(OSError):  # ENOSPC: the last one is taken
        for i in itertools.count():
            (directory / str(i)).touch()
    try:
        yield
    finally:
        for name in directory.iterdir():
            name.unlink()
        directory.rmdir()


@pytest.fixture
def partition(tmp_path: Path) -> Iterator[Partition]:
    with mounted_tmpfs(tmp_path / "disk", "size=16m,nr_inodes=64") as disk:
        config = LogConfig.from_properties({"flush.messages": "1", "segment.ms": str(10**15)})
        p = Partition.open(TopicPartition("t", 0), disk / "t-0", config)
        yield p
        p.close(snapshot=False)


async def test_a_data_batch_whose_flush_failed_is_a_duplicate_when_retried(
    partition: Partition,
) -> None:
    assert await produce(partition, pid=PID, seq=0) == 0
    with no_inode_left(partition), pytest.raises(KafkaStorageError):
        await produce(partition, pid=PID, seq=2)
    assert partition.log_end_offset == 4  # it is in the log
    assert await produce(partition, pid=PID, seq=2) == 2  # the retry: its original offset
    assert partition.log_end_offset == 4  # ...and written once
    assert await produce(partition, pid=PID, seq=4) == 4


async def test_a_marker_whose_flush_failed_has_ended_its_transaction(
    partition: Partition,
) -> None:
    await produce(partition, pid=PID, seq=0, txn=True)
    with no_inode_left(partition), pytest.raises(KafkaStorageError):
        await partition.append_txn_marker(PID, 0, commit=False, coordinator_epoch=0)
    assert partition.last_stable_offset == partition.high_watermark == 3
    assert [a.first_offset for a in partition.aborted_transactions(0, 3)] == [0]
