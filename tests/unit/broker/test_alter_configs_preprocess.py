"""(Incremental)AlterConfigs requests Kafka refuses before applying anything, and DescribeConfigs'
empty key list.

Kafka's ``ConfigAdminManager.preprocess`` answers INVALID_REQUEST, and changes nothing of the
resource, for a key named twice in one resource, for a null value (allowed only on an incremental
DELETE) and for a resource named twice in one request. The broker used to apply such requests
(the last of two values won; SET then DELETE deleted) or answered INVALID_CONFIG. An empty
``configuration_keys`` in DescribeConfigs asks for every config, as a null one does.
"""

from __future__ import annotations

from typing import Any

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_admin_handlers import create

DESCRIBE, ALTER, INCREMENTAL = 32, 33, 44
TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
INVALID_REQUEST = 42
DUPLICATE_KEYS = "Error due to duplicate config keys"
TWICE = "Each resource must appear at most once."


def op(name: str, kind: int, value: str | None) -> dict[str, Any]:
    return {"name": name, "config_operation": kind, "value": value}


def resource(name: str, configs: list[dict[str, Any]], rtype: int = TOPIC) -> dict[str, Any]:
    return {"resource_type": rtype, "resource_name": name, "configs": configs}


async def incremental(client: Client, *resources: dict[str, Any]) -> list[tuple[int, Any]]:
    r = await client.call(INCREMENTAL, 1, {"resources": list(resources), "validate_only": False})
    return [(x["error_code"], x["error_message"]) for x in r["responses"]]


async def legacy(client: Client, *resources: dict[str, Any]) -> list[tuple[int, Any]]:
    r = await client.call(ALTER, 1, {"resources": list(resources), "validate_only": False})
    return [(x["error_code"], x["error_message"]) for x in r["responses"]]


async def describe(client: Client, name: str, keys: list[str] | None) -> dict[str, str]:
    r = await client.call(
        DESCRIBE,
        3,
        {
            "resources": [
                {"resource_type": TOPIC, "resource_name": name, "configuration_keys": keys}
            ],
            "include_synonyms": False,
            "include_documentation": False,
        },
    )
    assert r["results"][0]["error_code"] == 0
    return {c["name"]: c["value"] for c in r["results"][0]["configs"]}


async def test_a_key_named_twice_is_refused_and_nothing_applied(client: Client) -> None:
    await create(client, "dup", retention_ms="1000")
    twice = [op("retention.ms", SET, "2000"), op("retention.ms", SET, "3000")]
    set_then_delete = [op("segment.ms", SET, "7200000"), op("retention.ms", DELETE, None)]
    set_then_delete.append(op("retention.ms", SET, "4000"))
    for configs in (twice, set_then_delete):
        assert await incremental(client, resource("dup", configs)) == [
            (INVALID_REQUEST, DUPLICATE_KEYS)
        ]
    legacy_twice = [{"name": "retention.ms", "value": "5"}, {"name": "retention.ms", "value": "6"}]
    assert await legacy(client, resource("dup", legacy_twice)) == [
        (INVALID_REQUEST, DUPLICATE_KEYS)
    ]
    configs = await describe(client, "dup", None)
    assert (configs["retention.ms"], configs["segment.ms"]) == ("1000", "604800000")


async def test_a_null_value_is_refused_but_on_an_incremental_delete(client: Client) -> None:
    await create(client, "nulls", retention_ms="1000", cleanup_policy="compact")
    nulls = [
        op("retention.ms", SET, None),
        op("segment.ms", DELETE, None),
        op("cleanup.policy", APPEND, None),
        op("max.message.bytes", SUBTRACT, None),
    ]
    assert await incremental(client, resource("nulls", nulls)) == [
        (
            INVALID_REQUEST,
            "Null value not supported for : retention.ms, cleanup.policy, max.message.bytes",
        )
    ]
    assert await legacy(client, resource("nulls", [{"name": "retention.ms", "value": None}])) == [
        (INVALID_REQUEST, "Null value not supported for : retention.ms")
    ]
    # a broker resource gets the same check before its own
    broker_null = resource("0", [op("log.cleanup.policy", APPEND, None)], BROKER)
    assert await incremental(client, broker_null) == [
        (INVALID_REQUEST, "Null value not supported for : log.cleanup.policy")
    ]
    configs = await describe(client, "nulls", ["retention.ms", "cleanup.policy"])
    assert configs == {"retention.ms": "1000", "cleanup.policy": "compact"}
    # DELETE takes no value
    assert await incremental(client, resource("nulls", [op("retention.ms", DELETE, None)])) == [
        (0, None)
    ]
    assert (await describe(client, "nulls", ["retention.ms"]))["retention.ms"] == "604800000"


async def test_a_resource_named_twice_is_refused_each_time(client: Client) -> None:
    await create(client, "twice")
    await create(client, "other")
    first = resource("twice", [op("retention.ms", SET, "1000")])
    again = resource("twice", [op("segment.ms", SET, "7200000")])
    other = resource("other", [op("retention.ms", SET, "3000")])
    assert await incremental(client, first, other, again) == [
        (INVALID_REQUEST, TWICE),
        (0, None),
        (INVALID_REQUEST, TWICE),
    ]
    legacy_one = resource("twice", [{"name": "retention.ms", "value": "5"}])
    assert await legacy(client, legacy_one, legacy_one) == [(INVALID_REQUEST, TWICE)] * 2
    configs = await describe(client, "twice", ["retention.ms", "segment.ms"])
    assert configs == {"retention.ms": "604800000", "segment.ms": "604800000"}
    assert (await describe(client, "other", ["retention.ms"]))["retention.ms"] == "3000"


async def test_an_empty_key_list_describes_every_config(client: Client) -> None:
    await create(client, "all", retention_ms="1000")
    every = await describe(client, "all", None)
    assert len(every) > 20 and every["retention.ms"] == "1000"
    assert await describe(client, "all", []) == every
    assert await describe(client, "all", ["retention.ms"]) == {"retention.ms": "1000"}
