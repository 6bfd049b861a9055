"""A producer fenced by a marker keeps its new epoch across a restart (Kafka's writeSnapshot
writes every producer entry, with or without a data batch).

InitProducerId of a transactional id with an ongoing transaction bumps the producer epoch and
the coordinator aborts with markers carrying the new epoch: on the partition the producer's
entry then has the new epoch and no data batch. Once the marker is gone from the local log
(retention), only the snapshot remembers that epoch; a zombie with the old epoch must still be
refused with INVALID_PRODUCER_EPOCH after the restart.
"""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest

from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.partition import Partition
from tiered_mq.broker.producer_state import ProducerStateManager, list_snapshots, snapshot_path
from tiered_mq.errors import InvalidProducerEpochError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("t", 0)
CONFIG = LogConfig(segment_bytes=300, file_delete_delay_ms=0)
ZOMBIE, OTHER = 7, 8


async def test_fencing_marker_epoch_survives_a_restart_without_the_marker(tmp_path: Path) -> None:
    p = Partition.open(TP, tmp_path, CONFIG)
    await produce(p, pid=ZOMBIE, seq=0, txn=True, epoch=0)
    await produce(p, pid=ZOMBIE, seq=2, txn=True, epoch=0)
    # InitProducerId fenced it: the coordinator aborts with the bumped epoch
    marker = await p.append_txn_marker(ZOMBIE, 1, commit=False, coordinator_epoch=3)
    seq = 0
    while p.log.active_segment.base_offset <= marker:  # another producer rolls past the marker
        await produce(p, pid=OTHER, seq=seq)
        seq += 2
    p.close()
    # retention removes the segments up to and with the marker, and their snapshots
    p = Partition.open(TP, tmp_path, CONFIG)
    p.log.delete_segments(p.log.segments()[:-1])
    p.producer_state.delete_snapshots_before(p.log.local_log_start_offset)
    assert p.log.local_log_start_offset > marker
    p.close()

    p = Partition.open(TP, tmp_path, CONFIG)  # the restart
    entry = p.producer_state.producers[ZOMBIE]
    assert (entry.epoch, entry.coordinator_epoch, entry.last_seq) == (1, 3, -1)
    with pytest.raises(InvalidProducerEpochError):
        await produce(p, pid=ZOMBIE, seq=4, txn=True, epoch=0)  # the zombie
    assert await produce(p, pid=ZOMBIE, seq=0, txn=True, epoch=1) == p.log_end_offset - 2
    p.close()


def test_snapshot_entry_without_a_data_batch_round_trips(tmp_path: Path) -> None:
    """Kafka's layout for such an entry: last sequence -1, last offset -1, offset delta 0."""
    ps = ProducerStateManager(tmp_path)
    ps.producers[ZOMBIE] = ProducerStateManager.decode_snapshot(_one_entry_snapshot())[ZOMBIE]  # type: ignore[index]
    ps.map_end_offset = 10
    ps.take_snapshot()
    assert list_snapshots(tmp_path) == [10]
    entries = ProducerStateManager.decode_snapshot(snapshot_path(tmp_path, 10).read_bytes())
    assert entries is not None
    e = entries[ZOMBIE]
    assert (e.epoch, e.last_seq, len(e.batches), e.last_timestamp) == (5, -1, 0, 1234)


def _one_entry_snapshot() -> bytes:
    """Producer 7, epoch 5, no data batch, timestamp 1234, coordinator epoch 2, no transaction."""
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", ZOMBIE, 5, -1, -1, 0, 1234, 2, -1)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body
