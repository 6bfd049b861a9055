"""DescribeConfigs of a topic resource whose name is not a legal topic name answers
INVALID_TOPIC_EXCEPTION, as Kafka's ConfigHelper (Topic.validate) does; a legal name of no
topic answers UNKNOWN_TOPIC_OR_PARTITION."""

from __future__ import annotations

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import create
from tiered_mq.errors import InvalidTopicError, UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey

TOPIC = 2


async def test_an_illegal_topic_name_is_invalid_topic(client: Client) -> None:
    await create(client, "known")
    names = ["known", "", "bad name!", "x" * 250, "..", "missing"]
    body = {
        "resources": [
            {"resource_type": TOPIC, "resource_name": n, "configuration_keys": None} for n in names
        ]
    }
    for version in (1, 3):
        r = await client.call(ApiKey.DESCRIBE_CONFIGS, version, body)
        codes = [(x["resource_name"], x["error_code"]) for x in r["results"]]
        invalid = InvalidTopicError.errno
        assert codes == [
            ("known", 0),
            ("", invalid),
            ("bad name!", invalid),
            ("x" * 250, invalid),
            ("..", invalid),
            ("missing", UnknownTopicOrPartitionError.errno),
        ], f"v{version}"
        assert r["results"][0]["configs"] and not any(x["configs"] for x in r["results"][1:])
