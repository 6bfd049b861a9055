"""TxnOffsetCommit offsets survive a broker restart at every step of the transaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_coordinator import SMALL, control_batches, tc_of
from tiered_mq import errors
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.group import log_format as group_fmt
from tiered_mq.broker.txn import state as sm
from tiered_mq.broker.txn.coordinator import now_ms
from tiered_mq.broker.txn.state import TxnState
from tiered_mq.topic_partition import TopicPartition

A0 = TopicPartition("a", 0)


def committed(broker: Broker, group: str = "g") -> dict[TopicPartition, int]:
    error, found = broker.group_coordinator.fetch_offsets(group, None)
    assert error == 0
    return {tp: v.offset for tp, v in found.items()}


async def begin_with_offsets(broker: Broker, offsets: dict[TopicPartition, int]) -> tuple[int, int]:
    """An ongoing transaction that sent ``offsets`` for group g (TxnOffsetCommit)."""
    tc = tc_of(broker)
    pid, epoch = await tc.init_producer_id("tx", 60_000)
    await tc.add_partitions("tx", pid, epoch, list(offsets))
    await tc.add_offsets("tx", pid, epoch, "g")
    values = {tp: group_fmt.OffsetValue(o, -1, "", 0) for tp, o in offsets.items()}
    await tc.txn_offset_commit("tx", "g", pid, epoch, values)
    return pid, epoch


async def test_acknowledged_txn_offsets_survive_a_restart_then_commit(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        pid, epoch = await begin_with_offsets(broker, {A0: 42})
        assert committed(broker) == {}
    finally:
        await broker.close()
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        assert committed(broker) == {}  # still pending: the transaction is ongoing
        assert broker.group_coordinator.unstable_partitions("g") == {A0}
        await tc_of(broker).end_txn("tx", pid, epoch, commit=True)
        assert committed(broker) == {A0: 42}
    finally:
        await broker.close()


async def test_prepare_commit_logged_then_crash_is_completed_at_start(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        pid, epoch = await begin_with_offsets(broker, {A0: 7})
        tc = tc_of(broker)
        prepared = sm.end_txn(tc.txns["tx"], pid, epoch, True, now_ms())
        assert prepared is not None
        await tc._store(prepared)  # the crash comes before any marker
        offsets_tp = broker.group_coordinator.offsets.partition_for("g")
        assert control_batches(broker, offsets_tp) == []
    finally:
        await broker.close()
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        assert tc_of(broker).txns["tx"].state is TxnState.COMPLETE_COMMIT
        assert control_batches(broker, offsets_tp) == [(pid, epoch)]
        assert committed(broker) == {A0: 7}
        assert broker.group_coordinator.unstable_partitions("g") == set()
    finally:
        await broker.close()


async def test_ongoing_txn_aborted_after_restart_drops_its_offsets(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        await broker.group_coordinator.commit_offsets("g", -1, "", None, -1, {A0: (3, -1, "")})
        await begin_with_offsets(broker, {A0: 9})
    finally:
        await broker.close()
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        assert committed(broker) == {A0: 3}
        tc = tc_of(broker)
        tc.txns["tx"] = tc.txns["tx"].replace(start_ms=tc.txns["tx"].start_ms - 61_000)
        assert await tc.abort_expired() == ["tx"]
        assert committed(broker) == {A0: 3}
        assert broker.group_coordinator.unstable_partitions("g") == set()
    finally:
        await broker.close()
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        assert committed(broker) == {A0: 3}
        assert broker.group_coordinator.unstable_partitions("g") == set()
    finally:
        await broker.close()


async def test_txn_offset_commit_needs_the_offsets_partition_and_current_epoch(
    tmp_path: Path,
) -> None:
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [A0])
        value = {A0: group_fmt.OffsetValue(1, -1, "", 0)}
        with pytest.raises(errors.InvalidTxnStateError):  # no AddOffsetsToTxn
            await tc.txn_offset_commit("tx", "g", pid, epoch, value)
        await tc.add_offsets("tx", pid, epoch, "g")
        with pytest.raises(errors.InvalidProducerEpochError):
            await tc.txn_offset_commit("tx", "g", pid, epoch - 1, value)
        assert broker.group_coordinator.unstable_partitions("g") == set()
    finally:
        await broker.close()
