"""Topic admin answers a Kafka client compares with Apache Kafka's (KRaft controller): what
``delete.topic.enable`` refuses, duplicate names in one request, manual replica assignments,
and the topic configs DescribeConfigs lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_admin_handlers import create, topic_req

TOPIC_DELETION_DISABLED, INVALID_REQUEST = 73, 42


async def test_delete_topic_enable_false_deletes_nothing(tmp_path: Path) -> None:
    """Kafka's ControllerApis.deleteTopics: TOPIC_DELETION_DISABLED for every topic (v3+),
    INVALID_REQUEST before v3; the broker used to ignore the setting and delete."""
    async with serving(tmp_path / "data", **{"delete.topic.enable": "false"}) as (broker, client):
        assert (await create(client, "keep"))["error_code"] == 0
        body = {"topic_names": ["keep", "missing"], "timeout_ms": 1000}
        r = await client.call(20, 3, body)
        assert [x["error_code"] for x in r["responses"]] == [TOPIC_DELETION_DISABLED] * 2
        r = await client.call(20, 1, body)
        assert [x["error_code"] for x in r["responses"]] == [INVALID_REQUEST] * 2
        assert broker.coordinator.get_topic("keep") is not None


async def test_a_topic_named_twice_is_answered_once_and_left_alone(tmp_path: Path) -> None:
    """Kafka's controller answers a repeated name once, INVALID_REQUEST "Duplicate topic
    name.", and acts on none of its entries. The broker used to answer each occurrence
    (librdkafka then fails the whole request, _BAD_MSG: "Broker returned topic d multiple
    times") and to grow or delete the topic for the first one."""
    async with serving(tmp_path / "data") as (broker, client):
        twice = topic_req("d")["topics"] * 2 + topic_req("ok")["topics"]
        r = await client.call(19, 4, {"topics": twice, "timeout_ms": 5000})
        answers = [(t["name"], t["error_code"], t["error_message"]) for t in r["topics"]]
        assert answers == [("d", INVALID_REQUEST, "Duplicate topic name."), ("ok", 0, None)]
        assert broker.coordinator.get_topic("d") is None

        grow = [{"name": "ok", "count": n, "assignments": None} for n in (2, 3)]
        body = {"topics": grow, "timeout_ms": 1000, "validate_only": False}
        r = await client.call(37, 1, body)
        answers = [(t["name"], t["error_code"], t["error_message"]) for t in r["results"]]
        assert answers == [("ok", INVALID_REQUEST, "Duplicate topic name.")]
        assert broker.coordinator.get_topic("ok").partitions == 1  # type: ignore[union-attr]

        r = await client.call(20, 3, {"topic_names": ["ok", "ok"], "timeout_ms": 1000})
        assert [(t["name"], t["error_code"]) for t in r["responses"]] == [("ok", INVALID_REQUEST)]
        assert broker.coordinator.get_topic("ok") is not None


def assigned(name: str, *replicas: list[int], index: list[int] | None = None) -> dict[str, Any]:
    """CreateTopics with manual assignments (partition ``index[i]`` gets ``replicas[i]``)."""
    indexes = index or list(range(len(replicas)))
    topic = {
        "name": name,
        "num_partitions": -1,
        "replication_factor": -1,
        "assignments": [
            {"partition_index": i, "broker_ids": r} for i, r in zip(indexes, replicas, strict=True)
        ],
        "configs": [],
    }
    return {"topics": [topic], "timeout_ms": 5000}


async def test_manual_assignments_are_checked_as_kafka_does(tmp_path: Path) -> None:
    """Kafka's validateManualPartitionAssignment: INVALID_REPLICA_ASSIGNMENT with its messages.
    The broker used to create a topic with partitions 0 and 2 as partitions 0 and 1, answer
    INVALID_REPLICATION_FACTOR for [0, 0] and INVALID_REQUEST for unknown brokers, and grow a
    topic by two partitions given one assignment."""
    async with serving(tmp_path / "data") as (broker, client):
        cases = [
            (assigned("gap", [0], [0], index=[0, 2]), "consecutive 0-based integer sequence"),
            (assigned("twice", [0], [0], index=[0, 0]), "multiple manual partition assignments"),
            (assigned("empty", []), "includes an empty replica list."),
            (assigned("dup", [0, 0]), "includes the broker 0 more than once."),
            (assigned("unknown", [7]), "includes broker 7, but no such broker is registered."),
        ]
        for body, message in cases:
            (t,) = (await client.call(19, 4, body))["topics"]
            assert (t["error_code"], message in t["error_message"]) == (39, True), t
            assert broker.coordinator.get_topic(t["name"]) is None
        (t,) = (await client.call(19, 4, assigned("ok", [0], [0])))["topics"]
        assert t["error_code"] == 0
        assert broker.coordinator.get_topic("ok").partitions == 2  # type: ignore[union-attr]

        def grow(count: int, *replicas: list[int]) -> dict[str, Any]:
            assignments = [{"broker_ids": r} for r in replicas]
            topic = {"name": "ok", "count": count, "assignments": assignments}
            return {"topics": [topic], "timeout_ms": 1000, "validate_only": False}

        for body, message in [
            (grow(4, [0]), "Attempted to add 2 additional partition(s), but only 1 assignment(s)"),
            (grow(3, [5]), "includes broker 5, but no such broker is registered."),
        ]:
            (t,) = (await client.call(37, 1, body))["results"]
            assert (t["error_code"], message in t["error_message"]) == (39, True), t
        assert (await client.call(37, 1, grow(4, [0], [0])))["results"][0]["error_code"] == 0
        assert broker.coordinator.get_topic("ok").partitions == 4  # type: ignore[union-attr]


async def test_describe_configs_types_are_kafkas(tmp_path: Path) -> None:
    """DescribeConfigs v3 ``config_type`` as Kafka's ConfigDef declares it: INT for
    segment.bytes, max.message.bytes, min.insync.replicas (it used to say LONG for every
    integer, so the Java AdminClient's ConfigEntry.type() was LONG), PASSWORD for secrets."""
    int_, long_, list_, password = 3, 5, 7, 9
    async with serving(tmp_path / "data") as (_, client):
        await create(client, "typed")
        body = {"include_synonyms": False, "include_documentation": False}
        resources = [
            {"resource_type": 2, "resource_name": "typed", "configuration_keys": None},
            {"resource_type": 4, "resource_name": "0", "configuration_keys": None},
        ]
        r = await client.call(32, 3, {**body, "resources": resources})
        topic, broker = ({c["name"]: c["config_type"] for c in x["configs"]} for x in r["results"])
        assert topic["segment.bytes"] == topic["max.message.bytes"] == int_
        assert topic["min.insync.replicas"] == topic["segment.index.bytes"] == int_
        assert topic["retention.ms"] == topic["segment.ms"] == topic["retention.bytes"] == long_
        assert topic["cleanup.policy"] == list_
        assert broker["broker.id"] == broker["num.partitions"] == int_
        assert broker["log.dirs"] == list_ and broker["sasl.jaas.config"] == password
