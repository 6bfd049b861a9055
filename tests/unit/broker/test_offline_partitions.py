"""Offline partitions: in the metadata, assigned to this broker, but their logs failed to open.

The fault is caused for real: a file lies where a partition's directory goes, so the partition
cannot be created (tests run as root, so a directory without permissions would not stop it).
Every API answers such a partition as Kafka answers one whose log dir is offline; the
CreateTopics or CreatePartitions that made it succeeds (Kafka's controller commits the topic, and
the broker's failure to create the log takes the partition offline).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client, start_broker
from tests.unit.broker.test_produce_fetch import batch, produce_body
from tiered_mq.broker.broker import Broker
from tiered_mq.errors import (
    KafkaStorageError,
    LeaderNotAvailableError,
    NotLeaderOrFollowerError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
CREATE_TOPICS, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH, WRITE_TXN_MARKERS = 19, 21, 23, 27
DESCRIBE_LOG_DIRS, CREATE_PARTITIONS, DESCRIBE_PRODUCERS = 35, 37, 61
STORAGE = KafkaStorageError.errno


async def _create_blocked(broker: Broker, client: Client, topic: str = "blocked") -> None:
    """``topic`` with partitions 0-2, partition 1 blocked by a file where its directory goes."""
    (broker.config.data_dir / f"{topic}-1").write_text("not a directory")
    body = {
        "topics": [{"name": topic, "num_partitions": 3, "replication_factor": 1}],
        "timeout_ms": 5000,
    }
    r = await client.call(CREATE_TOPICS, 4, body)
    assert r["topics"][0]["error_code"] == 0  # created: partition 1 is offline (Kafka's answer)


def _partitions(response: dict[str, Any], topic: str) -> dict[int, dict[str, Any]]:
    (entry,) = [t for t in response["topics"] if t["name"] == topic]
    assert entry["error_code"] == 0
    return {p["partition_index"]: p for p in entry["partitions"]}


async def test_metadata_answers_an_offline_partition_leader_not_available(
    broker: Broker, client: Client
) -> None:
    await _create_blocked(broker, client)
    node = broker.config.node_id
    for version in (1, 8):
        got = _partitions(await client.call(METADATA, version, {"topics": None}), "blocked")
        offline = got[1]
        assert offline["error_code"] == LeaderNotAvailableError.errno
        assert offline["leader_id"] == -1
        assert offline["replica_nodes"] == [node] and offline["isr_nodes"] == [node]
        if version >= 5:
            assert offline["offline_replicas"] == [node]
        for p in (0, 2):  # the other partitions of the topic are served
            assert got[p]["error_code"] == 0 and got[p]["leader_id"] == node
            if version >= 5:
                assert got[p]["offline_replicas"] == []


async def test_a_retry_of_the_creation_answers_topic_already_exists(
    broker: Broker, client: Client
) -> None:
    await _create_blocked(broker, client)
    body = {
        "topics": [{"name": "blocked", "num_partitions": 3, "replication_factor": 1}],
        "timeout_ms": 5000,
    }
    r = await client.call(CREATE_TOPICS, 4, body)
    assert r["topics"][0]["error_code"] == TopicAlreadyExistsError.errno


async def test_every_api_answers_an_offline_partition_a_storage_error(
    broker: Broker, client: Client
) -> None:
    await _create_blocked(broker, client)
    for version in (3, 8):  # Produce: KAFKA_STORAGE_ERROR from v3 (Kafka maps none)
        r = await client.call(PRODUCE, version, produce_body("blocked", batch([b"x"]), partition=1))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == STORAGE
    r = await client.call(PRODUCE, 8, produce_body("blocked", batch([b"y"]), partition=2))
    assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
    for version, code in ((5, NotLeaderOrFollowerError.errno), (6, STORAGE), (11, STORAGE)):
        r = await client.call(FETCH, version, fetch_body("blocked", 0, partition=1))
        assert r["responses"][0]["partitions"][0]["error_code"] == code, version
    for version in (1, 7):
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {"name": "blocked", "partitions": [{"partition_index": 1, "timestamp": -1}]}
            ],
        }
        r = await client.call(LIST_OFFSETS, version, body)
        assert r["topics"][0]["partitions"][0]["error_code"] == STORAGE
    body = {
        "replica_id": -1,
        "topics": [{"topic": "blocked", "partitions": [{"partition": 1, "leader_epoch": 0}]}],
    }
    r = await client.call(OFFSET_FOR_LEADER_EPOCH, 3, body)
    assert r["topics"][0]["partitions"][0]["error_code"] == STORAGE
    body = {
        "topics": [{"name": "blocked", "partitions": [{"partition_index": 1, "offset": 0}]}],
        "timeout_ms": 5000,
    }
    r = await client.call(DELETE_RECORDS, 1, body)
    assert r["topics"][0]["partitions"][0]["error_code"] == STORAGE
    body = {"topics": [{"name": "blocked", "partition_indexes": [1, 2]}]}
    r = await client.call(DESCRIBE_PRODUCERS, 0, body)
    codes = [p["error_code"] for p in r["topics"][0]["partitions"]]
    assert codes == [STORAGE, 0]
    marker = {
        "producer_id": 1000,
        "producer_epoch": 0,
        "transaction_result": False,
        "topics": [{"name": "blocked", "partition_indexes": [1]}],
        "coordinator_epoch": 0,
    }
    r = await client.call(WRITE_TXN_MARKERS, 1, {"markers": [marker]})
    code = r["markers"][0]["topics"][0]["partitions"][0]["error_code"]
    assert code == UnknownTopicOrPartitionError.errno  # Kafka's: no online log (getMagic)
    r = await client.call(DESCRIBE_LOG_DIRS, 1, {"topics": None})
    (result,) = r["results"]
    assert result["error_code"] == 0  # the data dir itself is fine; the offline log is left out
    listed = {(t["name"], p["partition_index"]) for t in result["topics"] for p in t["partitions"]}
    assert ("blocked", 0) in listed and ("blocked", 2) in listed
    assert ("blocked", 1) not in listed


async def test_an_offline_partition_comes_back_at_the_next_start_once_its_cause_is_gone(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    broker = await start_broker(data)
    try:
        client = await Client.connect(broker.port)
        await _create_blocked(broker, client)
        r = await client.call(PRODUCE, 8, produce_body("blocked", batch([b"kept"]), partition=2))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
        await client.close()
    finally:
        await broker.close()
    (data / "blocked-1").unlink()
    broker = await start_broker(data)
    try:
        client = await Client.connect(broker.port)
        got = _partitions(await client.call(METADATA, 8, {"topics": None}), "blocked")
        assert [p["error_code"] for p in got.values()] == [0, 0, 0]
        assert got[1]["leader_id"] == broker.config.node_id and got[1]["offline_replicas"] == []
        r = await client.call(PRODUCE, 8, produce_body("blocked", batch([b"new"]), partition=1))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
        r = await client.call(FETCH, 11, fetch_body("blocked", 0, partition=2))
        assert r["responses"][0]["partitions"][0]["high_watermark"] == 1
        await client.close()
    finally:
        await broker.close()


async def test_deleting_a_topic_forgets_its_offline_partitions(
    broker: Broker, client: Client
) -> None:
    """A guard of the offline set's bookkeeping (the old code had none to forget)."""
    await _create_blocked(broker, client)
    r = await client.call(20, 3, {"topic_names": ["blocked"], "timeout_ms": 5000})
    assert r["responses"][0]["error_code"] == 0
    r = await client.call(PRODUCE, 8, produce_body("blocked", batch([b"x"]), partition=1))
    code = r["responses"][0]["partition_responses"][0]["error_code"]
    assert code == UnknownTopicOrPartitionError.errno  # gone, not offline
    (broker.config.data_dir / "blocked-1").unlink()
    body = {
        "topics": [{"name": "blocked", "num_partitions": 3, "replication_factor": 1}],
        "timeout_ms": 5000,
    }
    assert (await client.call(CREATE_TOPICS, 4, body))["topics"][0]["error_code"] == 0
    got = _partitions(await client.call(METADATA, 8, {"topics": [{"name": "blocked"}]}), "blocked")
    assert [p["error_code"] for p in got.values()] == [0, 0, 0]


async def test_partitions_added_beside_a_blocked_one_are_served(
    broker: Broker, client: Client
) -> None:
    body = {
        "topics": [{"name": "grows", "num_partitions": 1, "replication_factor": 1}],
        "timeout_ms": 5000,
    }
    assert (await client.call(CREATE_TOPICS, 4, body))["topics"][0]["error_code"] == 0
    (broker.config.data_dir / "grows-1").write_text("not a directory")
    body = {
        "topics": [{"name": "grows", "count": 3, "assignments": None}],
        "timeout_ms": 5000,
        "validate_only": False,
    }
    r = await client.call(CREATE_PARTITIONS, 1, body)
    assert r["results"][0]["error_code"] == 0  # grown: partition 1 is offline
    got = _partitions(await client.call(METADATA, 8, {"topics": None}), "grows")
    assert [got[p]["error_code"] for p in range(3)] == [0, LeaderNotAvailableError.errno, 0]
    for p, code in ((0, 0), (1, STORAGE), (2, 0)):
        r = await client.call(PRODUCE, 8, produce_body("grows", batch([b"x"]), partition=p))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == code, p
