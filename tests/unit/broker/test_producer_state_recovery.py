"""Producer state across crashes of a partition with local retention (tiered topics).

A SIGKILL between a roll creating its new segment and the roll's snapshot leaves only an older
snapshot. Recovery replays the segments after it; unless that rebuilt state is written down,
local retention can delete those segments, and the next restart would start from the old
snapshot with nothing to replay: the producer's last sequence goes back, and its next batch,
in sequence, is answered OUT_OF_ORDER_SEQUENCE_NUMBER (fatal to librdkafka's idempotent
producer). Kafka's rebuildProducerState snapshots at the end of recovery; so does Partition.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.partition import Partition
from tiered_mq.broker.producer_state import ProducerStateManager, list_snapshots
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("t", 0)
CONFIG = LogConfig(segment_bytes=2048, remote_storage_enable=True, file_delete_delay_ms=0)
PID, N = 7, 10


class Killed(BaseException):
    """The process dies here: nothing after it runs (not an Exception: no handler sees it)."""


async def _fill_to_a_roll_that_dies(p: Partition, seq: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Produce until a roll, killed after the new segment exists and before its snapshot;
    returns the next sequence (the batch that triggered the roll was never acknowledged)."""

    def killed(self: ProducerStateManager, *args: object, **kwargs: object) -> Path:
        raise Killed

    segments = len(p.log.segments())
    with monkeypatch.context() as patched:
        patched.setattr(ProducerStateManager, "take_snapshot", killed)
        with pytest.raises(Killed):
            while True:
                await produce(p, pid=PID, seq=seq, n=N)
                seq += N
    assert len(p.log.segments()) == segments + 1
    return seq


async def test_state_rebuilt_after_a_crash_survives_local_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = Partition.open(TP, tmp_path, CONFIG)
    seq = 0
    while len(p.log.segments()) < 3:
        await produce(p, pid=PID, seq=seq, n=N)
        seq += N
    seq = await _fill_to_a_roll_that_dies(p, seq, monkeypatch)

    # restart (no close): replayed from the older snapshot, then written down at the log end
    p = Partition.open(TP, tmp_path, CONFIG)
    assert p.producer_state.producers[PID].last_seq == seq - 1
    assert list_snapshots(tmp_path)[-1] == p.log_end_offset
    p.log.delete_segments(p.log.segments()[:-1])  # the uploader's local retention

    p = Partition.open(TP, tmp_path, CONFIG)  # restart again (no close)
    assert p.log.local_log_start_offset == p.log_end_offset
    assert p.producer_state.producers[PID].last_seq == seq - 1
    end = p.log_end_offset
    assert await produce(p, pid=PID, seq=seq, n=N) == end  # the next batch, in sequence
    assert await produce(p, pid=PID, seq=seq, n=N) == end  # its retry: a duplicate


async def test_a_snapshot_below_the_local_log_start_forgets_settled_producers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """State that cannot be brought up to date (the snapshot lost, the log after it deleted,
    e.g. on a full disk) is not trusted: the producer becomes unknown and is accepted."""
    p = Partition.open(TP, tmp_path, CONFIG)
    await produce(p, pid=8, seq=0, n=1, txn=True)  # an open transaction stays known
    seq = 0
    while len(p.log.segments()) < 3:
        await produce(p, pid=PID, seq=seq, n=N)
        seq += N
    seq = await _fill_to_a_roll_that_dies(p, seq, monkeypatch)
    for snapshot in list_snapshots(tmp_path)[1:]:  # only the first roll's snapshot is left
        (tmp_path / f"{snapshot:020d}.snapshot").unlink()
    p.log.on_segments_deleted = None  # a crash before the snapshots below the start went
    p.log.delete_segments(p.log.segments()[:-1])

    with caplog.at_level(logging.WARNING):
        p = Partition.open(TP, tmp_path, CONFIG)
    assert "forgot 1 producer(s)" in caplog.text
    assert PID not in p.producer_state.producers
    assert 8 in p.producer_state.producers and p.last_stable_offset == 0
    end = p.log_end_offset
    assert await produce(p, pid=PID, seq=seq, n=N) == end  # accepted, not OUT_OF_ORDER


async def test_segment_deletion_deletes_the_snapshots_below_the_local_log_start(
    tmp_path: Path,
) -> None:
    """Kafka's deleteSegments deletes the producer snapshots of the segments it deletes: none
    below the new local log start is left, at once, not at the next roll (which never comes
    to a quiet partition). The newest one below used to stay, and with the cold tier's local
    retention every one did."""
    p = Partition.open(TP, tmp_path, CONFIG)
    seq = 0
    while len(p.log.segments()) < 5:
        await produce(p, pid=PID, seq=seq, n=N)
        seq += N
    bases = [s.base_offset for s in p.log.segments()]
    assert list_snapshots(tmp_path) == bases[1:]  # one per roll, at the new segment's base
    p.log.delete_segments(p.log.segments()[:2])  # local retention
    assert p.log.local_log_start_offset == bases[2]
    assert list_snapshots(tmp_path) == bases[2:]
    p.log.set_log_start_offset(bases[4])  # DeleteRecords up to the active segment
    p.log.delete_segments(lambda s: s.next_offset() <= bases[4])
    assert list_snapshots(tmp_path) == bases[4:]
    # what is left is what recovery needs: the state comes back whole after a restart
    p = Partition.open(TP, tmp_path, CONFIG)
    assert p.producer_state.producers[PID].last_seq == seq - 1
    assert await produce(p, pid=PID, seq=seq, n=N) == p.log_end_offset - N
