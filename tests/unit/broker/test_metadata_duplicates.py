"""Metadata naming a topic more than once answers it once, as Kafka does (its handler takes the
requested names as a set), in the order first asked; an unknown name asked twice is answered
once too."""

from __future__ import annotations

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import create
from tiered_mq.protocol.api_versions import ApiKey

UNKNOWN_TOPIC_OR_PARTITION = 3


async def test_a_topic_asked_twice_is_answered_once(client: Client) -> None:
    await create(client, "twice")
    asked = ["twice", "missing", "twice", "missing"]
    body = {
        "topics": [{"name": n} for n in asked],
        "allow_auto_topic_creation": False,
    }
    response = await client.call(ApiKey.METADATA, 8, body)
    answered = [(t["name"], t["error_code"]) for t in response["topics"]]
    assert answered == [("twice", 0), ("missing", UNKNOWN_TOPIC_OR_PARTITION)]
