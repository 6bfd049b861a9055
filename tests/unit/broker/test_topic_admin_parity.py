"""Topic admin answers a Kafka client compares with Apache Kafka's (KRaft controller): what
``delete.topic.enable`` refuses, duplicate names in one request, manual replica assignments,
and the topic configs DescribeConfigs lists."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_admin_handlers import create

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
