"""The transaction coordinator inside a broker: markers, offsets, reload, timeouts, fencing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq import errors
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.group import log_format as group_fmt
from tiered_mq.broker.txn.coordinator import TransactionCoordinator
from tiered_mq.broker.txn.state import TxnState
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)
SMALL = {"transaction.state.log.num.partitions": "2"}


def tc_of(broker: Broker) -> TransactionCoordinator:
    assert broker.txn_coordinator is not None
    return broker.txn_coordinator


def control_batches(broker: Broker, tp: TopicPartition) -> list[tuple[int, int]]:
    """(producer id, epoch) of every control batch of ``tp``."""
    log = broker.replica_manager.local_log(tp)
    data = log.read(0, 1 << 20)
    buf = b"".join(r.read() for r in data.regions)
    return [(h.producer_id, h.producer_epoch) for h, _ in decode_batches(buf) if h.is_control]


async def test_commit_writes_markers_and_materializes_offsets(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 2, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [A0, A1])
        await tc.add_offsets("tx", pid, epoch, "g")
        offset = group_fmt.OffsetValue(42, -1, "", 0)
        await tc.txn_offset_commit("tx", "g", pid, epoch, {A0: offset})
        gc = broker.group_coordinator
        assert gc.offsets.fetch("g") == {}  # pending until the commit
        with pytest.raises(errors.InvalidTxnStateError):
            tc.verify_produce("tx", pid, epoch, TopicPartition("a", 5))
        await tc.end_txn("tx", pid, epoch, commit=True)
        assert gc.offsets.fetch("g")[A0].offset == 42
        assert control_batches(broker, A0) == control_batches(broker, A1) == [(pid, epoch)]
        assert control_batches(broker, gc.offsets.partition_for("g")) == [(pid, epoch)]
        assert tc.txns["tx"].state is TxnState.COMPLETE_COMMIT
        await tc.end_txn("tx", pid, epoch, commit=True)  # a retry is answered OK
        # an abort drops pending offsets
        await tc.add_offsets("tx", pid, epoch, "g")
        await tc.txn_offset_commit(
            "tx", "g", pid, epoch, {A0: group_fmt.OffsetValue(99, -1, "", 0)}
        )
        await tc.end_txn("tx", pid, epoch, commit=False)
        assert gc.offsets.fetch("g")[A0].offset == 42
    finally:
        await broker.close()


async def test_state_survives_restart_and_timeout_aborts_with_fencing(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 2, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [A0])
        partition = broker.replica_manager.get_partition(A0)
        await produce(partition, pid=pid, seq=0, txn=True)
        assert partition.last_stable_offset == 0
    finally:
        await broker.close()
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        tc = tc_of(broker)
        meta = tc.txns["tx"]
        assert (meta.state, meta.partitions, meta.producer_id) == (TxnState.ONGOING, {A0}, pid)
        assert broker.replica_manager.get_partition(A0).last_stable_offset == 0
        assert await tc.abort_expired() == []
        tc.txns["tx"] = meta.replace(start_ms=meta.start_ms - 61_000)  # let it time out
        assert await tc.abort_expired() == ["tx"]
        partition = broker.replica_manager.get_partition(A0)
        assert partition.last_stable_offset == partition.high_watermark == 3
        assert [e.producer_id for e in partition.aborted_transactions(0, 3)] == [pid]
        assert control_batches(broker, A0) == [(pid, epoch + 1)]
        with pytest.raises(errors.InvalidProducerEpochError):  # the late producer is fenced
            await tc.end_txn("tx", pid, epoch, commit=True)
        pid2, epoch2 = await tc.init_producer_id("tx", 60_000)
        assert (pid2, epoch2) == (pid, epoch + 2)
    finally:
        await broker.close()


async def test_init_aborts_the_previous_instances_transaction(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 2, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [A1])
        pid2, epoch2 = await tc.init_producer_id("tx", 60_000)
        assert (pid2, epoch2) == (pid, epoch + 1)
        assert tc.txns["tx"].state is TxnState.EMPTY
        assert control_batches(broker, A1) == [(pid, epoch + 1)]
        with pytest.raises(errors.InvalidProducerEpochError):
            await tc.add_partitions("tx", pid, epoch, [A0])
        with pytest.raises(errors.InvalidTransactionTimeoutError):
            await tc.init_producer_id("other", 10**9)
        with pytest.raises(errors.InvalidProducerIdMappingError):
            await tc.end_txn("unknown", 1, 0, commit=True)
    finally:
        await broker.close()
