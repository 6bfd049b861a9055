"""Dynamic broker configs (KIP-226) on an in-process broker: the cluster-wide default and the
per-broker level over the wire (IncrementalAlterConfigs 44, AlterConfigs 33, DescribeConfigs
32), the precedence, validate_only, Kafka's refusals, and the values across a restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_admin_handlers import create
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.dynamic_config import Update, check_keys_and_values, entity_of
from tiered_mq.broker.handlers._common import error_message
from tiered_mq.coordination.embedded import FILE_NAME
from tiered_mq.errors import InvalidRequestError
from tiered_mq.topic_partition import TopicPartition

SET, DELETE, APPEND = 0, 1, 2
INVALID_CONFIG, INVALID_REQUEST = 40, 42


async def alter(
    client: Client, name: str, *ops: tuple[str, int, str | None], validate_only: bool = False
) -> dict[str, Any]:
    """IncrementalAlterConfigs on the BROKER resource ``name`` ("" = cluster-wide default)."""
    configs = [{"name": n, "config_operation": op, "value": v} for n, op, v in ops]
    r = await client.call(
        44,
        0,
        {
            "resources": [{"resource_type": 4, "resource_name": name, "configs": configs}],
            "validate_only": validate_only,
        },
    )
    return r["responses"][0]  # type: ignore[no-any-return]


async def describe(
    client: Client, rtype: int, name: str, keys: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    r = await client.call(
        32,
        3,
        {
            "resources": [
                {"resource_type": rtype, "resource_name": name, "configuration_keys": keys}
            ],
            "include_synonyms": True,
            "include_documentation": False,
        },
    )
    result = r["results"][0]
    assert result["error_code"] == 0, result
    return {c["name"]: c for c in result["configs"]}


def chain(entry: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(s["name"], s["value"], s["source"]) for s in entry["synonyms"]]


def retention_of(broker: Broker, topic: str) -> int:
    return broker.replica_manager.partitions[TopicPartition(topic, 0)].log.config.retention_ms


# pure checks ------------------------------------------------------------------------------------
def test_only_topic_defaults_change_at_runtime_and_values_name_their_key() -> None:
    check_keys_and_values({"log.retention.ms": "1000", "log.cleanup.policy": "compact"})
    with pytest.raises(InvalidRequestError) as e:
        check_keys_and_values({"num.partitions": "3", "log.dirs": "/x", "log.retention.ms": "1"})
    assert error_message(e.value) == (
        "Cannot update these configs dynamically: [log.dirs, num.partitions]"
    )
    with pytest.raises(InvalidRequestError, match=r"\[log.retention.hours\]"):
        check_keys_and_values({"log.retention.hours": "1"})  # Kafka: only the first synonym
    with pytest.raises(InvalidRequestError) as bad:
        check_keys_and_values({"log.retention.ms": "a day"})
    assert error_message(bad.value).startswith(
        "Invalid value a day for configuration log.retention.ms: "
    )
    with pytest.raises(InvalidRequestError, match=r"message\.max\.bytes"):
        check_keys_and_values({"message.max.bytes": "-5"})


def test_resource_names() -> None:
    assert entity_of("", 1) == "<default>"
    assert entity_of("1", 1) == "1"
    with pytest.raises(InvalidRequestError, match="expected 1, but received 2"):
        entity_of("2", 1)
    with pytest.raises(InvalidRequestError, match="must be an integer"):
        entity_of("one", 1)


def test_precedence_of_the_levels(tmp_path: Path) -> None:
    config = BrokerConfig(tmp_path, overrides={"log.retention.hours": "1"})
    assert config.topic_defaults == {"retention.ms": "3600000"}
    config.set_dynamic("<default>", {"log.retention.ms": "2000"})
    assert config.topic_defaults == {"retention.ms": "2000"}
    config.set_dynamic("0", {"log.retention.ms": "1000"})
    assert config.topic_defaults["retention.ms"] == "1000"
    assert config.get("log.retention.ms") == "1000"
    config.set_dynamic("0", {})
    assert config.topic_defaults["retention.ms"] == "2000"
    config.set_dynamic("<default>", {})
    assert config.topic_defaults == {"retention.ms": "3600000"}  # the static value again


# over the wire ----------------------------------------------------------------------------------
async def test_the_cluster_default_reaches_topics_without_an_override(tmp_path: Path) -> None:
    async with serving(tmp_path, **{"log.retention.ms": "5000000"}) as (broker, client):
        await create(client, "plain")
        await create(client, "own", retention_ms="1000")
        assert (await alter(client, "", ("log.retention.ms", SET, "86400000")))["error_code"] == 0
        assert retention_of(broker, "plain") == 86400000  # the live partition, no restart
        assert retention_of(broker, "own") == 1000
        plain = (await describe(client, 2, "plain", ["retention.ms"]))["retention.ms"]
        assert (plain["value"], plain["config_source"]) == ("86400000", 3)
        assert chain(plain) == [
            ("log.retention.ms", "86400000", 3),
            ("log.retention.ms", "5000000", 4),
            ("log.retention.hours", "168", 5),  # Kafka's default is on the coarsest name
        ]

        # this broker's own value wins over the cluster default, the topic's over both
        assert (await alter(client, "0", ("log.retention.ms", SET, "7200000")))["error_code"] == 0
        assert retention_of(broker, "plain") == 7200000
        own = (await describe(client, 2, "own", ["retention.ms"]))["retention.ms"]
        assert [s for _, _, s in chain(own)] == [1, 2, 3, 4, 5]

        listed = await describe(client, 4, "0", ["log.retention.ms", "num.partitions"])
        assert chain(listed["log.retention.ms"]) == [
            ("log.retention.ms", "7200000", 2),
            ("log.retention.ms", "86400000", 3),
            ("log.retention.ms", "5000000", 4),
            ("log.retention.hours", "168", 5),  # Kafka's default is on the coarsest name
        ]
        assert listed["log.retention.ms"]["read_only"] is False
        assert listed["num.partitions"]["read_only"] is True
        default = await describe(client, 4, "")
        assert {k: (c["value"], c["config_source"]) for k, c in default.items()} == {
            "log.retention.ms": ("86400000", 3)
        }

        # deleting a dynamic value brings back the level below
        assert (await alter(client, "0", ("log.retention.ms", DELETE, None)))["error_code"] == 0
        assert retention_of(broker, "plain") == 86400000
        assert (await alter(client, "", ("log.retention.ms", DELETE, None)))["error_code"] == 0
        assert retention_of(broker, "plain") == 5000000
        assert await describe(client, 4, "") == {}


async def test_max_message_bytes_follows_message_max_bytes(client: Client, broker: Broker) -> None:
    await create(client, "big")
    r = await alter(client, "", ("message.max.bytes", SET, "2000000"))
    assert r["error_code"] == 0
    tp = TopicPartition("big", 0)
    assert broker.replica_manager.partitions[tp].log.config.max_message_bytes == 2000000
    described = await describe(client, 2, "big", ["max.message.bytes"])
    assert chain(described["max.message.bytes"])[0] == ("message.max.bytes", "2000000", 3)


async def test_validate_only_changes_nothing(client: Client, broker: Broker) -> None:
    await create(client, "t")
    r = await alter(client, "", ("log.retention.ms", SET, "1000"), validate_only=True)
    assert r["error_code"] == 0
    assert broker.coordinator.broker_configs("<default>") == {}
    assert broker.config.dynamic_default == {}
    assert retention_of(broker, "t") == 604800000
    bad = await alter(client, "", ("log.retention.ms", SET, "soon"), validate_only=True)
    assert bad["error_code"] == INVALID_REQUEST


async def test_refusals_are_kafkas(client: Client, broker: Broker) -> None:
    r = await alter(client, "", ("num.partitions", SET, "3"), ("log.retention.ms", SET, "1"))
    assert (r["error_code"], r["error_message"]) == (
        INVALID_REQUEST,
        "Cannot update these configs dynamically: [num.partitions]",
    )
    r = await alter(client, "0", ("log.segment.bytes", SET, "tiny"))
    assert r["error_code"] == INVALID_REQUEST and "log.segment.bytes" in r["error_message"]
    r = await alter(client, "7", ("log.retention.ms", SET, "1000"))
    assert r["error_code"] == INVALID_REQUEST and "expected 0, but received 7" in r["error_message"]
    r = await alter(client, "", ("log.retention.ms", APPEND, "1"))  # ConfigAdminManager's
    assert (r["error_code"], r["error_message"]) == (
        INVALID_CONFIG,
        "Config value append is not allowed for config key: log.retention.ms",
    )
    assert broker.config.dynamic_default == {} and broker.config.dynamic_broker == {}


async def test_a_default_that_would_break_a_topic_is_refused(
    client: Client, broker: Broker
) -> None:
    await create(client, "lagging", min_compaction_lag_ms="5000000")
    r = await alter(client, "", ("log.cleaner.max.compaction.lag.ms", SET, "1000"))
    assert r["error_code"] == INVALID_REQUEST
    assert "topic 'lagging'" in r["error_message"]
    assert broker.config.dynamic_default == {}


async def test_alter_configs_replaces_the_whole_level(client: Client, broker: Broker) -> None:
    await alter(
        client, "", ("log.retention.ms", SET, "1000"), ("log.cleanup.policy", SET, "delete")
    )
    r = await client.call(
        33,
        1,
        {
            "resources": [
                {
                    "resource_type": 4,
                    "resource_name": "",
                    "configs": [{"name": "log.segment.bytes", "value": "1048576"}],
                }
            ],
            "validate_only": False,
        },
    )
    assert r["responses"][0]["error_code"] == 0
    assert broker.config.dynamic_default == {"log.segment.bytes": "1048576"}


async def test_append_to_the_cleanup_policy(client: Client, broker: Broker) -> None:
    r = await alter(client, "", ("log.cleanup.policy", APPEND, "compact"))
    assert r["error_code"] == 0
    assert broker.config.dynamic_default == {"log.cleanup.policy": "delete,compact"}


async def test_the_values_survive_a_restart(tmp_path: Path) -> None:
    async with serving(tmp_path) as (_, client):
        await create(client, "kept")
        await alter(client, "", ("log.retention.ms", SET, "86400000"))
        await alter(client, "0", ("log.segment.bytes", SET, "1048576"))
    stored = json.loads((tmp_path / FILE_NAME).read_text())["broker_configs"]
    assert stored == {
        "<default>": {"log.retention.ms": "86400000"},
        "0": {"log.segment.bytes": "1048576"},
    }
    async with serving(tmp_path) as (broker, client):
        assert retention_of(broker, "kept") == 86400000
        tp = TopicPartition("kept", 0)
        assert broker.replica_manager.partitions[tp].log.config.segment_bytes == 1048576
        listed = await describe(client, 2, "kept", ["retention.ms"])
        assert listed["retention.ms"]["config_source"] == 3


async def test_stored_values_that_no_longer_validate_are_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving(tmp_path):
        pass
    path = tmp_path / FILE_NAME
    state = json.loads(path.read_text())
    state["broker_configs"] = {
        "<default>": {"log.retention.ms": "86400000", "num.partitions": "3"},
        "0": {"log.segment.bytes": "huge"},
    }
    path.write_text(json.dumps(state))
    async with serving(tmp_path) as (broker, _):
        assert broker.config.dynamic_default == {"log.retention.ms": "86400000"}
        assert broker.config.dynamic_broker == {}
    assert "num.partitions" in caplog.text and "log.segment.bytes" in caplog.text


async def test_concurrent_changes_of_one_level_both_count(broker: Broker) -> None:
    def setting(key: str, value: str) -> Update:
        return lambda current: {**current, key: value}

    registry = broker.topic_registry
    await asyncio.gather(
        registry.set_broker_configs("<default>", setting("log.retention.ms", "1000"), False),
        registry.set_broker_configs("<default>", setting("log.segment.bytes", "1048576"), False),
    )
    assert broker.coordinator.broker_configs("<default>") == {
        "log.retention.ms": "1000",
        "log.segment.bytes": "1048576",
    }
