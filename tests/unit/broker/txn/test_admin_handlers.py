"""DescribeProducers, DescribeTransactions and ListTransactions over the wire (in-process
broker, the project's codec): answers, filters, errors and ACLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import ACLS_ON, serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tests.unit.broker.txn.test_partition_txn import produce
from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.broker.broker import Broker
from tiered_mq.topic_partition import TopicPartition

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, TOPIC_AUTHORIZATION_FAILED = 3, 6, 29
COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST = 14, 42
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_NOT_FOUND = 53, 105
INVALID_REGULAR_EXPRESSION = 128


async def setup(broker: Broker) -> tuple[int, int]:
    """Topic ``a`` (2 partitions); ``open`` has a transaction on a-1, ``done`` committed one on
    a-0, ``idle`` never started one. Returns (producer id of ``open``, of ``done``)."""
    await broker.topic_registry.create_topic("a", 2, {})
    tc = tc_of(broker)
    await tc.init_producer_id("idle", 60_000)
    pid, epoch = await tc.init_producer_id("open", 60_000)
    await tc.add_partitions("open", pid, epoch, [A1])
    pid2, epoch2 = await tc.init_producer_id("done", 60_000)
    await tc.add_partitions("done", pid2, epoch2, [A0])
    await tc.end_txn("done", pid2, epoch2, commit=True)
    return pid, pid2


def listed(response: dict[str, Any]) -> list[tuple[str, str]]:
    assert response["error_code"] == 0
    return sorted(
        (t["transactional_id"], t["transaction_state"]) for t in response["transaction_states"]
    )


async def test_describe_producers_answers_per_partition(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 2, {})
        partition = broker.replica_manager.get_partition(A0)
        await produce(partition, pid=5, seq=0, n=3)
        await produce(partition, pid=6, seq=0, txn=True, n=2)
        topics = [
            {"name": "a", "partition_indexes": [0, 1, 7]},
            {"name": "nope", "partition_indexes": [0]},
        ]
        r = await client.call(61, 0, {"topics": topics})
        a, nope = r["topics"]
        p0, p1, p7 = a["partitions"]
        assert p0["error_code"] == 0 and p0["error_message"] is None
        assert [
            (
                p["producer_id"],
                p["producer_epoch"],
                p["last_sequence"],
                p["current_txn_start_offset"],
            )
            for p in p0["active_producers"]
        ] == [(5, 0, 2, -1), (6, 0, 1, 3)]
        assert all(
            p["coordinator_epoch"] == -1 and p["last_timestamp"] == 1000
            for p in p0["active_producers"]
        )
        assert (p1["error_code"], p1["active_producers"]) == (0, [])
        assert (p7["partition_index"], p7["error_code"]) == (7, UNKNOWN_TOPIC_OR_PARTITION)
        assert nope["partitions"][0]["error_code"] == UNKNOWN_TOPIC_OR_PARTITION
        # a partition of a known topic without a replica here
        hosted = broker.replica_manager.partitions.pop(A1)
        try:
            r = await client.call(61, 0, {"topics": [{"name": "a", "partition_indexes": [1]}]})
        finally:
            broker.replica_manager.partitions[A1] = hosted
        assert r["topics"][0]["partitions"][0]["error_code"] == NOT_LEADER_OR_FOLLOWER


async def test_describe_transactions(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        pid, pid2 = await setup(broker)
        r = await client.call(65, 0, {"transactional_ids": ["open", "done", "idle", "nope", ""]})
        opened, done, idle, nope, empty = r["transaction_states"]
        assert opened["error_code"] == 0 and opened["transaction_state"] == "Ongoing"
        assert (opened["producer_id"], opened["producer_epoch"]) == (pid, 0)
        assert (
            opened["transaction_timeout_ms"] == 60_000 and opened["transaction_start_time_ms"] > 0
        )
        assert opened["topics"] == [{"topic": "a", "partitions": [1]}]
        assert (done["transaction_state"], done["producer_id"], done["topics"]) == (
            "CompleteCommit",
            pid2,
            [],
        )
        assert (idle["transaction_state"], idle["transaction_start_time_ms"]) == ("Empty", -1)
        assert (nope["transactional_id"], nope["error_code"]) == (
            "nope",
            TRANSACTIONAL_ID_NOT_FOUND,
        )
        assert empty["error_code"] == INVALID_REQUEST


async def test_list_transactions_filters(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        pid, pid2 = await setup(broker)
        everything: dict[str, Any] = {"state_filters": [], "producer_id_filters": []}
        r = await client.call(66, 0, everything)
        assert listed(r) == [("done", "CompleteCommit"), ("idle", "Empty"), ("open", "Ongoing")]
        assert {
            t["producer_id"] for t in r["transaction_states"] if t["transactional_id"] == "open"
        } == {pid}
        r = await client.call(66, 0, {**everything, "state_filters": ["Ongoing", "Bogus", "Bogus"]})
        assert listed(r) == [("open", "Ongoing")] and r["unknown_state_filters"] == ["Bogus"]
        r = await client.call(66, 0, {**everything, "state_filters": ["Bogus"]})
        assert listed(r) == [] and r["unknown_state_filters"] == ["Bogus"]
        r = await client.call(66, 0, {**everything, "producer_id_filters": [pid2]})
        assert listed(r) == [("done", "CompleteCommit")]
        # v1: started more than an hour ago -- Kafka's rule keeps ids without a start time
        r = await client.call(66, 1, {**everything, "duration_filter": 3_600_000})
        assert listed(r) == [("idle", "Empty")]
        r = await client.call(66, 1, {**everything, "duration_filter": -1})
        assert len(listed(r)) == 3
        # v2: the whole id must match the pattern
        r = await client.call(66, 2, {**everything, "transactional_id_pattern": "o.*"})
        assert listed(r) == [("open", "Ongoing")]
        r = await client.call(66, 2, {**everything, "transactional_id_pattern": "pe"})
        assert listed(r) == []
        r = await client.call(66, 2, {**everything, "transactional_id_pattern": ""})
        assert len(listed(r)) == 3
        r = await client.call(66, 2, {**everything, "transactional_id_pattern": "(o"})
        assert r["error_code"] == INVALID_REGULAR_EXPRESSION and r["transaction_states"] == []
        tc_of(broker).loaded = False
        r = await client.call(66, 0, everything)
        assert r["error_code"] == COORDINATOR_LOAD_IN_PROGRESS
        r = await client.call(65, 0, {"transactional_ids": ["open"]})
        assert r["transaction_states"][0]["error_code"] == COORDINATOR_LOAD_IN_PROGRESS
        tc_of(broker).loaded = True


def _allow_other(kind: ResourceType, name: str, op: AclOperation) -> AclBinding:
    pattern = ResourcePattern(kind, name, PatternType.LITERAL)
    return AclBinding(pattern, "User:other", "*", op, AclPermissionType.ALLOW)


async def test_acls_hide_what_the_principal_may_not_describe(tmp_path: Path) -> None:
    async with serving(
        tmp_path / "d",
        **SMALL,
        **ACLS_ON,
    ) as (broker, client):
        await setup(broker)
        await broker.topic_registry.create_topic("secret", 1, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("hidden", 60_000)
        await tc.add_partitions("hidden", pid, epoch, [TopicPartition("secret", 0)])
        opened = tc.txns["open"]
        await tc.add_partitions("open", opened.producer_id, 0, [TopicPartition("secret", 0)])
        assert broker.authorizer is not None
        # ACLs exist for these resources, none for User:ANONYMOUS: it is denied them
        await broker.authorizer.create(
            [
                _allow_other(ResourceType.TOPIC, "secret", AclOperation.ALL),
                _allow_other(ResourceType.TOPIC, "ghost", AclOperation.ALL),
                _allow_other(ResourceType.TRANSACTIONAL_ID, "hidden", AclOperation.ALL),
            ]
        )
        topics = [{"name": n, "partition_indexes": [0]} for n in ("secret", "ghost", "a")]
        r = await client.call(61, 0, {"topics": topics})
        codes = [t["partitions"][0]["error_code"] for t in r["topics"]]
        assert codes == [TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, 0]
        r = await client.call(65, 0, {"transactional_ids": ["hidden", "open"]})
        hidden, opened = r["transaction_states"]
        assert hidden["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert opened["error_code"] == 0 and opened["topics"] == [{"topic": "a", "partitions": [1]}]
        r = await client.call(66, 0, {"state_filters": [], "producer_id_filters": []})
        assert [t for t, _ in listed(r)] == ["done", "idle", "open"]
