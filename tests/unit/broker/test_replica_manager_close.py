"""A broker's shutdown closes its partitions side by side.

Closing a partition that took writes costs several fsyncs (segments, producer snapshot,
checkpoints): one after another, a broker with 2,000 such partitions took up to 53 s to stop,
past a service manager's stop timeout (then killed, and recovered at the next start). Here each
close waits until ``WIDTH`` closes are under way at once: closed one at a time, none of them
would get past the wait."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tiered_mq.broker.partition import Partition
from tiered_mq.broker.replica_manager import CLOSE_WORKERS
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.records import Record, encode_batch
from tiered_mq.topic_partition import TopicPartition

WIDTH = 4  # <= CLOSE_WORKERS and <= the default executor's threads (5 at least)


async def test_partitions_close_side_by_side_and_keep_their_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert WIDTH <= CLOSE_WORKERS
    broker = await start_broker(tmp_path / "data")
    await broker.topic_registry.create_topic("t", WIDTH - 1)  # + __consumer_offsets-0
    for p in range(WIDTH - 1):
        partition = broker.replica_manager.get_partition(TopicPartition("t", p))
        records = bytearray(encode_batch([Record(0, 0, b"k", b"v")]))
        await partition.append_as_leader(records, iter_batches(records))

    together = threading.Barrier(WIDTH, timeout=10)
    closed = []
    original = Partition.close

    def close(self: Partition, snapshot: bool = True) -> None:
        together.wait()  # BrokenBarrierError (logged as a failed close) when alone
        original(self, snapshot)
        closed.append(self.tp)

    monkeypatch.setattr(Partition, "close", close)
    await broker.close()
    assert len(closed) == WIDTH

    monkeypatch.undo()
    again = await start_broker(tmp_path / "data")
    try:
        for p in range(WIDTH - 1):
            partition = again.replica_manager.get_partition(TopicPartition("t", p))
            assert partition.log_end_offset == 1
    finally:
        await again.close()
