"""Topic admin answers a Kafka client compares with Apache Kafka's (KRaft controller): what
``delete.topic.enable`` refuses, duplicate names in one request, manual replica assignments,
and the topic configs DescribeConfigs lists."""

from __future__ import annotations

from pathlib import Path

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
