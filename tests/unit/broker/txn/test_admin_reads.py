"""Read-only views for the transaction admin APIs: producer state and coordinator state."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tests.unit.broker.txn.test_partition_txn import open_partition, produce
from tiered_mq import errors
from tiered_mq.broker.producer_state import ActiveProducer
from tiered_mq.broker.txn.coordinator import state_from_name, state_name
from tiered_mq.broker.txn.state import TxnState
from tiered_mq.topic_partition import TopicPartition


def test_state_names_are_kafkas() -> None:
    assert [state_name(s) for s in TxnState] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ]
    assert all(state_from_name(state_name(s)) is s for s in TxnState)
    assert state_from_name("ONGOING") is None and state_from_name("") is None


async def test_active_producers_follow_appends_and_markers(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    assert p.producer_state.active_producers() == []
    await produce(p)  # 0-1, no producer id: not listed
    await produce(p, pid=5, seq=0, n=3)  # 2-4
    await produce(p, pid=5, seq=3, n=2)  # 5-6: last sequence 4
    txn_start = await produce(p, pid=9, seq=0, txn=True, n=2)  # 7-8, transaction open
    assert txn_start == 7
    assert p.producer_state.active_producers() == [
        ActiveProducer(5, 0, 4, 1000, -1, -1),
        ActiveProducer(9, 0, 1, 1000, -1, 7),
    ]
    await produce(p, pid=9, seq=2, txn=True, n=1)  # same transaction: start unchanged
    assert p.producer_state.active_producers()[1].current_txn_start_offset == 7
    before = int(time.time() * 1000)
    await p.append_txn_marker(9, 0, commit=True, coordinator_epoch=3)
    committed = p.producer_state.active_producers()[1]
    # the last timestamp is the marker's, as Kafka's appendEndTxnMarker sets it
    assert before <= committed.last_timestamp <= time.time() * 1000
    assert committed == ActiveProducer(9, 0, 2, committed.last_timestamp, 3, -1)
    # a fencing marker with a bumped epoch: the new epoch has sent nothing yet
    await produce(p, pid=9, seq=3, txn=True, n=1)
    assert p.producer_state.active_producers()[1].last_timestamp == 1000
    await p.append_txn_marker(9, 1, commit=False, coordinator_epoch=4)
    fenced = p.producer_state.active_producers()[1]
    assert fenced == ActiveProducer(9, 1, -1, fenced.last_timestamp, 4, -1)
    assert fenced.last_timestamp >= committed.last_timestamp
    # a data batch of the new epoch keeps the last marker's coordinator epoch (as Kafka)
    await produce(p, pid=9, seq=0, n=1, epoch=2)
    assert p.producer_state.active_producers()[1].coordinator_epoch == 4
    p.close()


async def test_active_producers_survive_a_reopen(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=5, seq=0, n=3)
    await produce(p, pid=9, seq=0, txn=True, n=2)  # 3-4, left open
    before = p.producer_state.active_producers()
    p.close()
    p = open_partition(tmp_path)
    assert p.producer_state.active_producers() == before
    assert before[1].current_txn_start_offset == 3
    p.close()


@pytest.mark.parametrize("from_snapshot", [True, False])
async def test_marker_coordinator_epoch_survives_a_reopen(
    tmp_path: Path, from_snapshot: bool
) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=9, seq=0, txn=True, n=2)
    await p.append_txn_marker(9, 0, commit=False, coordinator_epoch=7)
    (marked,) = p.producer_state.active_producers()
    assert marked == ActiveProducer(9, 0, 1, marked.last_timestamp, 7, -1)
    assert marked.last_timestamp > 1000  # the marker's (now), not the data batch's
    p.close()  # takes a producer snapshot
    if not from_snapshot:  # as after a crash before any snapshot: replay reads the marker
        delete_snapshots(tmp_path)
    p = open_partition(tmp_path)
    assert p.producer_state.active_producers() == [marked]
    p.close()


async def test_coordinator_describe_and_list(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 2, {})
        tc = tc_of(broker)
        assert tc.describe_txn("nope") is None and tc.list_txns() == []
        pid, epoch = await tc.init_producer_id("open", 60_000)
        described = tc.describe_txn("open")
        assert described is not None and described.state is TxnState.EMPTY
        assert described.start_ms == -1 and described.timeout_ms == 60_000
        await tc.add_partitions("open", pid, epoch, [TopicPartition("a", 1)])
        pid2, epoch2 = await tc.init_producer_id("done", 30_000)
        await tc.add_partitions("done", pid2, epoch2, [TopicPartition("a", 0)])
        await tc.end_txn("done", pid2, epoch2, commit=True)
        opened, done = tc.describe_txn("open"), tc.describe_txn("done")
        assert opened is not None and done is not None
        assert opened.state is TxnState.ONGOING and opened.producer_id == pid
        assert opened.partitions == {TopicPartition("a", 1)} and opened.start_ms > 0
        assert done.state is TxnState.COMPLETE_COMMIT and done.partitions == set()
        assert done.start_ms > 0  # the last transaction's start stays visible
        assert [m.transactional_id for m in tc.list_txns()] == ["done", "open"]
        # Dead ids are being removed: neither described nor listed
        tc.txns["gone"] = done.replace(transactional_id="gone", state=TxnState.DEAD)
        assert tc.describe_txn("gone") is None
        assert [m.transactional_id for m in tc.list_txns()] == ["done", "open"]
        tc.loaded = False
        with pytest.raises(errors.CoordinatorLoadInProgressError):
            tc.describe_txn("open")
        with pytest.raises(errors.CoordinatorLoadInProgressError):
            tc.list_txns()
        tc.loaded = True
    finally:
        await broker.close()


def delete_snapshots(dir: Path) -> None:
    for snapshot in dir.rglob("*.snapshot"):
        snapshot.unlink()
