"""DescribeConfigs (32) v3 of the BROKER resource over the wire: the Kafka defaults users look for
(``log.retention.hours``, ``num.partitions``, ``offsets.topic.*``, ``group.*``,
``offset.metadata.max.bytes``), the hours/minutes/ms synonyms with Kafka's precedence, sources,
types, documentation, hidden passwords; and ``offset.metadata.max.bytes`` set with ``--config``
bounding what OffsetCommit stores (static only, as in Kafka)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, serving
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.errors import OffsetMetadataTooLargeError
from tiered_mq.protocol.api_versions import ApiKey

DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5
INT, LONG, PASSWORD = 3, 5, 9
INVALID_REQUEST = 42


async def describe(
    client: Client, rtype: int, name: str, keys: list[str] | None = None, docs: bool = False
) -> dict[str, dict[str, Any]]:
    r = await client.call(
        ApiKey.DESCRIBE_CONFIGS,
        3,
        {
            "resources": [
                {"resource_type": rtype, "resource_name": name, "configuration_keys": keys}
            ],
            "include_synonyms": True,
            "include_documentation": docs,
        },
    )
    result = r["results"][0]
    assert result["error_code"] == 0, result
    return {c["name"]: c for c in result["configs"]}


def shown(entry: dict[str, Any]) -> tuple[str | None, int]:
    return entry["value"], entry["config_source"]


def chain(entry: dict[str, Any]) -> list[tuple[str, str | None, int]]:
    return [(s["name"], s["value"], s["source"]) for s in entry["synonyms"]]


async def test_the_broker_lists_kafkas_defaults_users_look_for(tmp_path: Path) -> None:
    async with serving(tmp_path) as (_, client):
        configs = await describe(client, 4, "0")
    assert shown(configs["log.retention.hours"]) == ("168", DEFAULT)
    assert chain(configs["log.retention.hours"]) == [("log.retention.hours", "168", DEFAULT)]
    assert shown(configs["log.retention.minutes"]) == (None, DEFAULT)  # Kafka: no default
    assert shown(configs["log.retention.ms"]) == (None, DEFAULT)
    assert shown(configs["log.roll.hours"]) == ("168", DEFAULT)
    assert shown(configs["log.roll.ms"]) == (None, DEFAULT)
    assert shown(configs["log.retention.check.interval.ms"]) == ("300000", DEFAULT)
    assert shown(configs["offset.metadata.max.bytes"]) == ("4096", DEFAULT)
    assert shown(configs["offsets.retention.check.interval.ms"]) == ("600000", DEFAULT)
    assert shown(configs["offsets.load.buffer.size"]) == ("5242880", DEFAULT)
    assert shown(configs["transaction.max.timeout.ms"]) == ("900000", DEFAULT)
    assert shown(configs["num.partitions"]) == ("1", DEFAULT)
    assert shown(configs["default.replication.factor"]) == ("1", DEFAULT)
    assert shown(configs["offsets.topic.replication.factor"]) == ("1", DEFAULT)
    # what the group coordinator uses (Kafka's 3000 would be untrue here)
    assert shown(configs["group.initial.rebalance.delay.ms"]) == ("300", DEFAULT)
    for name in ("log.retention.hours", "log.retention.minutes", "offset.metadata.max.bytes"):
        assert configs[name]["read_only"] is True, name  # Kafka: static only
        assert configs[name]["config_type"] == INT, name
    assert configs["log.retention.ms"]["read_only"] is False
    assert configs["log.retention.ms"]["config_type"] == LONG
    # settings this broker does not honour are not advertised
    assert "queued.max.request.bytes" not in configs
    # flush.ms's last fallback (Kafka's ServerTopicConfigSynonyms), honoured as such
    assert shown(configs["log.flush.scheduler.interval.ms"]) == (str(2**63 - 1), DEFAULT)
    assert shown(configs["log.flush.interval.ms"]) == (None, DEFAULT)  # Kafka: no default


async def test_hours_minutes_and_ms_resolve_as_in_kafka(tmp_path: Path) -> None:
    settings = {"log.retention.hours": "1", "log.retention.minutes": "5", "log.roll.hours": "2"}
    async with serving(tmp_path, **settings) as (broker, client):
        await broker.topic_registry.create_topic("t", 1, {})
        configs = await describe(client, 4, "0")
        topic = await describe(client, 2, "t", ["retention.ms", "segment.ms"])
    assert shown(configs["log.retention.hours"]) == ("1", STATIC)
    assert chain(configs["log.retention.hours"]) == [
        ("log.retention.hours", "1", STATIC),
        ("log.retention.hours", "168", DEFAULT),
    ]
    assert shown(configs["log.retention.minutes"]) == ("5", STATIC)
    assert shown(configs["log.retention.ms"]) == (None, DEFAULT)  # not "5": never set itself
    # minutes win over hours; the topic lists every name that was set
    assert shown(topic["retention.ms"]) == ("300000", STATIC)
    assert chain(topic["retention.ms"]) == [
        ("log.retention.minutes", "5", STATIC),
        ("log.retention.hours", "1", STATIC),
        ("log.retention.hours", "168", DEFAULT),
    ]
    assert shown(topic["segment.ms"]) == ("7200000", STATIC)


async def test_ms_wins_and_a_dynamic_value_heads_the_chain(tmp_path: Path) -> None:
    settings = {"log.retention.hours": "1", "log.retention.ms": "7000"}
    async with serving(tmp_path, **settings) as (broker, client):
        await broker.topic_registry.create_topic("t", 1, {})
        topic = await describe(client, 2, "t", ["retention.ms"])
        assert shown(topic["retention.ms"]) == ("7000", STATIC)
        await broker.topic_registry.dynamic_configs.alter(
            "0", lambda c: {"log.retention.ms": "9000"}, False
        )
        configs = await describe(client, 4, "0", ["log.retention.ms", "log.retention.hours"])
        topic = await describe(client, 2, "t", ["retention.ms"])
    assert chain(configs["log.retention.ms"]) == [
        ("log.retention.ms", "9000", DYNAMIC_BROKER),
        ("log.retention.ms", "7000", STATIC),
        ("log.retention.hours", "1", STATIC),
        ("log.retention.hours", "168", DEFAULT),
    ]
    assert shown(configs["log.retention.hours"]) == ("1", STATIC)
    assert shown(topic["retention.ms"]) == ("9000", DYNAMIC_BROKER)


async def test_a_topic_name_given_to_the_broker_shows_under_its_broker_name(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, **{"segment.bytes": "2097152"}) as (_, client):
        configs = await describe(client, 4, "0", ["log.segment.bytes"])
    assert shown(configs["log.segment.bytes"]) == ("2097152", STATIC)  # was the 1 GiB default


async def test_the_cluster_default_lists_the_levels_below_it(tmp_path: Path) -> None:
    async with serving(tmp_path, **{"log.retention.ms": "5000"}) as (broker, client):
        await broker.topic_registry.dynamic_configs.alter(
            "0", lambda c: {"log.retention.ms": "8000"}, False
        )
        await broker.topic_registry.dynamic_configs.alter(
            "<default>", lambda c: {"log.retention.ms": "6000"}, False
        )
        configs = await describe(client, 4, "")
    assert list(configs) == ["log.retention.ms"]
    assert chain(configs["log.retention.ms"]) == [
        ("log.retention.ms", "6000", DYNAMIC_DEFAULT),
        ("log.retention.ms", "5000", STATIC),
        ("log.retention.hours", "168", DEFAULT),
    ]


async def test_documentation_when_asked(tmp_path: Path) -> None:
    async with serving(tmp_path) as (broker, client):
        await broker.topic_registry.create_topic("t", 1, {})
        without = await describe(client, 4, "0")
        with_docs = await describe(client, 4, "0", docs=True)
        topic = await describe(client, 2, "t", docs=True)
    assert all(c["documentation"] is None for c in without.values())
    undocumented = sorted(k for k, c in with_docs.items() if not c["documentation"])
    assert undocumented == []
    assert "OFFSET_METADATA_TOO_LARGE" in with_docs["offset.metadata.max.bytes"]["documentation"]
    assert "retention.ms" in with_docs["log.retention.hours"]["documentation"]
    assert sorted(k for k, c in topic.items() if not c["documentation"]) == []


async def test_passwords_are_hidden_with_their_synonyms(tmp_path: Path) -> None:
    jaas = 'PlainLoginModule required user_alice="secret";'
    async with serving(tmp_path, **{"sasl.jaas.config": jaas}) as (_, client):
        configs = await describe(client, 4, "0", ["sasl.jaas.config", "ssl.key.password"])
    for name in ("sasl.jaas.config", "ssl.key.password"):
        assert configs[name]["value"] is None
        assert configs[name]["is_sensitive"] is True
        assert configs[name]["config_type"] == PASSWORD
    # Kafka's default is null, which lists no DEFAULT_CONFIG synonym
    assert chain(configs["sasl.jaas.config"]) == [("sasl.jaas.config", None, STATIC)]


# offset.metadata.max.bytes ---------------------------------------------------------------------
async def commit(client: Client, metadata: str) -> int:
    r = await client.call(
        ApiKey.OFFSET_COMMIT,
        2,
        {
            "group_id": "g",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "retention_time_ms": -1,
            "topics": [
                {
                    "name": "a",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 1,
                            "committed_metadata": metadata,
                        }
                    ],
                }
            ],
        },
    )
    return int(r["topics"][0]["partitions"][0]["error_code"])


async def test_offset_metadata_max_bytes_bounds_commits(tmp_path: Path) -> None:
    async with serving(tmp_path, **{"offset.metadata.max.bytes": "10"}) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        assert await commit(client, "m" * 10) == 0
        assert await commit(client, "m" * 11) == OffsetMetadataTooLargeError.errno
        configs = await describe(client, 4, "0", ["offset.metadata.max.bytes"])
        assert shown(configs["offset.metadata.max.bytes"]) == ("10", STATIC)
        # static only, as in Kafka: a dynamic change is refused and changes nothing
        r = await client.call(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            0,
            {
                "resources": [
                    {
                        "resource_type": 4,
                        "resource_name": "0",
                        "configs": [
                            {
                                "name": "offset.metadata.max.bytes",
                                "config_operation": 0,
                                "value": "100",
                            }
                        ],
                    }
                ],
                "validate_only": False,
            },
        )
        assert r["responses"][0]["error_code"] == INVALID_REQUEST
        assert await commit(client, "m" * 11) == OffsetMetadataTooLargeError.errno


async def test_the_default_bound_is_kafkas_4096(tmp_path: Path) -> None:
    async with serving(tmp_path) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        assert await commit(client, "m" * 4096) == 0
        assert await commit(client, "m" * 4097) == OffsetMetadataTooLargeError.errno


@pytest.mark.parametrize(
    "key", ["offsets.topic.replication.factor", "transaction.state.log.replication.factor"]
)
def test_a_replication_factor_other_than_one_is_refused_at_start(tmp_path: Path, key: str) -> None:
    BrokerConfig(tmp_path, overrides={key: "1"}).check_values()
    with pytest.raises(ValueError, match=f"{key}='3'.*no replication"):
        BrokerConfig(tmp_path, overrides={key: "3"}).check_values()
