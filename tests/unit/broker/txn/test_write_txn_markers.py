"""WriteTxnMarkers over the wire (in-process broker, the project's codec): an admin aborts a
hanging transaction (KIP-664), with Kafka's producer-epoch, coordinator-epoch and ACL checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import ACLS_ON, serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.acl.binding import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.broker.group import log_format as group_fmt
from tiered_mq.topic_partition import TopicPartition

WRITE_TXN_MARKERS, DESCRIBE_PRODUCERS = 27, 61
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, CLUSTER_AUTHORIZATION_FAILED = 3, 6, 31
INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED = 47, 52
A0 = TopicPartition("a", 0)


def marker(
    pid: int, epoch: int, partitions: dict[str, list[int]], coordinator_epoch: int = -1
) -> dict[str, Any]:
    """An ABORT marker for ``pid`` in ``partitions`` (topic -> indexes)."""
    return {
        "producer_id": pid,
        "producer_epoch": epoch,
        "transaction_result": False,
        "topics": [{"name": t, "partition_indexes": ps} for t, ps in partitions.items()],
        "coordinator_epoch": coordinator_epoch,
    }


def codes(response: dict[str, Any]) -> list[list[tuple[str, int, int]]]:
    """Per marker: (topic, partition, error code) in the answer's order."""
    return [
        [
            (t["name"], p["partition_index"], p["error_code"])
            for t in m["topics"]
            for p in t["partitions"]
        ]
        for m in response["markers"]
    ]


@pytest.mark.parametrize("version", [0, 1])
async def test_an_admin_abort_unblocks_the_last_stable_offset(tmp_path: Path, version: int) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        partition = broker.replica_manager.get_partition(A0)
        await produce(partition, pid=6, seq=0, txn=True, n=2)  # 0-1: a transaction no one ends
        await produce(partition, n=3)  # 2-4
        assert (partition.last_stable_offset, partition.high_watermark) == (0, 5)

        request = {
            "markers": [
                marker(6, 0, {"a": [0, 9], "nope": [0]}),
                marker(7, 0, {"a": [0]}),  # a producer the partition never saw: a no-op marker
            ]
        }
        r = await client.call(WRITE_TXN_MARKERS, version, request)
        assert [m["producer_id"] for m in r["markers"]] == [6, 7]
        assert codes(r) == [
            [
                ("a", 0, 0),
                ("a", 9, UNKNOWN_TOPIC_OR_PARTITION),
                ("nope", 0, UNKNOWN_TOPIC_OR_PARTITION),
            ],
            [("a", 0, 0)],
        ]
        # the ABORT is in the log: the LSO moves on and read_committed skips offsets 0-1
        assert partition.last_stable_offset == partition.high_watermark == 7
        assert [(t.producer_id, t.first_offset) for t in partition.aborted_transactions(0, 7)] == [
            (6, 0)
        ]
        r = await client.call(
            DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "a", "partition_indexes": [0]}]}
        )
        (six,) = [
            p for p in r["topics"][0]["partitions"][0]["active_producers"] if p["producer_id"] == 6
        ]
        assert (six["current_txn_start_offset"], six["coordinator_epoch"]) == (-1, -1)
        # a partition of a known topic without a replica here
        hosted = broker.replica_manager.partitions.pop(A0)
        try:
            r = await client.call(
                WRITE_TXN_MARKERS, version, {"markers": [marker(6, 0, {"a": [0]})]}
            )
        finally:
            broker.replica_manager.partitions[A0] = hosted
        assert codes(r) == [[("a", 0, NOT_LEADER_OR_FOLLOWER)]]


async def test_stale_producer_and_coordinator_epochs_are_refused(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        partition = broker.replica_manager.get_partition(A0)
        await produce(partition, pid=8, seq=0, txn=True, n=1, epoch=2)
        r = await client.call(WRITE_TXN_MARKERS, 1, {"markers": [marker(8, 1, {"a": [0]})]})
        assert codes(r) == [[("a", 0, INVALID_PRODUCER_EPOCH)]]
        assert partition.last_stable_offset == 0  # still open: nothing was written
        r = await client.call(WRITE_TXN_MARKERS, 1, {"markers": [marker(8, 2, {"a": [0]}, 5)]})
        assert codes(r) == [[("a", 0, 0)]]
        # the partition now knows coordinator epoch 5: a marker from epoch 4 is a zombie's
        await produce(partition, pid=8, seq=1, txn=True, n=1, epoch=2)
        end = partition.log_end_offset
        r = await client.call(WRITE_TXN_MARKERS, 1, {"markers": [marker(8, 2, {"a": [0]}, 4)]})
        assert codes(r) == [[("a", 0, TRANSACTION_COORDINATOR_FENCED)]]
        assert partition.log_end_offset == end and partition.last_stable_offset == end - 1


async def test_an_abort_in_consumer_offsets_drops_the_pending_offsets(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_offsets("tx", pid, epoch, "g")
        await tc.txn_offset_commit(
            "tx", "g", pid, epoch, {A0: group_fmt.OffsetValue(42, -1, "", 0)}
        )
        gc = broker.group_coordinator
        assert gc.unstable_partitions("g") == {A0}
        offsets_tp = gc.offsets.partition_for("g")
        request = {"markers": [marker(pid, epoch, {offsets_tp.topic: [offsets_tp.partition]})]}
        r = await client.call(WRITE_TXN_MARKERS, 1, request)
        assert codes(r) == [[(offsets_tp.topic, offsets_tp.partition, 0)]]
        assert gc.unstable_partitions("g") == set() and gc.offsets.fetch("g") == {}


async def test_it_needs_cluster_action(tmp_path: Path) -> None:
    async with serving(
        tmp_path / "d",
        **SMALL,
        **ACLS_ON,
    ) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        partition = broker.replica_manager.get_partition(A0)
        await produce(partition, pid=6, seq=0, txn=True, n=2)
        assert broker.authorizer is not None
        cluster = ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
        allow_other = AclBinding(
            cluster, "User:other", "*", AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW
        )
        await broker.authorizer.create([allow_other])  # so User:ANONYMOUS is denied
        r = await client.call(
            WRITE_TXN_MARKERS, 1, {"markers": [marker(6, 0, {"a": [0], "b": [1]})]}
        )
        assert codes(r) == [
            [("a", 0, CLUSTER_AUTHORIZATION_FAILED), ("b", 1, CLUSTER_AUTHORIZATION_FAILED)]
        ]
        assert partition.last_stable_offset == 0
