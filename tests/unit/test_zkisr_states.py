"""The first state of a partition a tool wrote without one (Kafka's controller: the live
replicas in sync, the first of them leading), and which later states an open partition takes
(a higher leader epoch, or another ISR or replica set in its own epoch; never an older epoch's)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tiered_mq.broker.metadata_changes import _changed
from tiered_mq.coordination.base import PartitionState
from tiered_mq.coordination.zk_session import first_state


def test_only_live_replicas_are_in_sync_and_the_first_live_one_leads() -> None:
    assert first_state([1, 0, 2], frozenset({0, 2})) == PartitionState(0, 0, (0, 2), (1, 0, 2))
    assert first_state([0, 1], frozenset({0, 1})) == PartitionState(0, 0, (0, 1), (0, 1))


def test_no_live_replica_no_state() -> None:
    assert first_state([1, 2], frozenset({0})) is None


def hosted(epoch: int, isr: tuple[int, ...], replicas: tuple[int, ...]) -> Any:
    return SimpleNamespace(leader_epoch=epoch, isr=isr, replicas=replicas)


def test_an_open_partition_takes_a_new_isr_or_replica_set_of_its_epoch_or_later() -> None:
    open_ = hosted(3, (0, 1), (0, 1))
    assert not _changed(open_, PartitionState(0, 3, (0, 1), (0, 1)))
    assert _changed(open_, PartitionState(0, 3, (0,), (0, 1)))  # a shrink
    assert _changed(open_, PartitionState(0, 3, (0,), (0,)))  # a reassignment
    assert _changed(open_, PartitionState(0, 4, (0, 1), (0, 1)))  # a new leader epoch
    assert not _changed(open_, PartitionState(0, 2, (0,), (0, 1)))  # stale
