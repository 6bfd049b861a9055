"""DescribeConfigs of a TOPIC with ``include_synonyms``: each topic config lists its topic
override, then the broker configs it falls back to, as named in Kafka's
``ServerTopicConfigSynonyms``, at every level they are set (a real ``tiered-mq dev`` broker, a
raw request for the exact lists, confluent-kafka for what a client reports).

- ``segment.jitter.ms`` falls back to ``log.roll.jitter.ms`` then ``log.roll.jitter.hours``
  (Kafka's default 0), ``flush.ms`` to ``log.flush.interval.ms`` then
  ``log.flush.scheduler.interval.ms`` (default Long.MAX_VALUE). Neither fallback was known:
  ``--config log.roll.jitter.hours=2`` was refused at start as an unknown config, and
  ``log.flush.scheduler.interval.ms`` was accepted and ignored.
- A topic config no broker config defaults (Kafka's ``CONFIGS_WITH_NO_SERVER_DEFAULTS``:
  ``remote.storage.enable``, ``*.replication.throttled.replicas``, ...) lists no synonym but
  its own override; it listed a DEFAULT_CONFIG synonym of its own name, which Kafka has not.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

from tests.integration.broker_process import request
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

DESCRIBE_CONFIGS, ALTER_CONFIGS, CREATE_TOPICS = 32, 33, 19
TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC, DYNAMIC_BROKER, STATIC, DEFAULT = 1, 2, 4, 5
LONG_MAX = str(2**63 - 1)
Chain = list[tuple[str, str | None, int]]


def describe(port: int, rtype: int, name: str) -> dict[str, dict[str, Any]]:
    body = {
        "resources": [{"resource_type": rtype, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True,
        "include_documentation": False,
    }
    result = request(port, DESCRIBE_CONFIGS, 3, body)["results"][0]
    assert result["error_code"] == 0, result
    return {c["name"]: c for c in result["configs"]}


def chain(entry: dict[str, Any]) -> Chain:
    return [(s["name"], s["value"], s["source"]) for s in entry["synonyms"]]


def shown(entry: dict[str, Any]) -> tuple[str | None, int]:
    return entry["value"], entry["config_source"]


def create(port: int, name: str, **configs: str) -> None:
    topic = {
        "name": name,
        "num_partitions": 1,
        "replication_factor": 1,
        "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in configs.items()],
    }
    answer = request(port, CREATE_TOPICS, 4, {"topics": [topic], "timeout_ms": 5000})
    assert answer["topics"][0]["error_code"] == 0, answer


def test_time_fallbacks_and_configs_without_a_broker_default(
    broker_factory: BrokerFactory,
) -> None:
    args = ["--config", "log.roll.jitter.hours=2"]
    args += ["--config", "log.flush.scheduler.interval.ms=60000"]
    broker = broker_factory(extra_args=args)
    create(broker.port, "t", **{"follower.replication.throttled.replicas": "0:0"})
    topic = describe(broker.port, TOPIC, "t")

    assert shown(topic["segment.jitter.ms"]) == ("7200000", STATIC)  # 2 hours
    assert chain(topic["segment.jitter.ms"]) == [
        ("log.roll.jitter.hours", "2", STATIC),
        ("log.roll.jitter.hours", "0", DEFAULT),
    ]
    assert shown(topic["flush.ms"]) == ("60000", STATIC)
    assert chain(topic["flush.ms"]) == [
        ("log.flush.scheduler.interval.ms", "60000", STATIC),
        ("log.flush.scheduler.interval.ms", LONG_MAX, DEFAULT),
    ]
    # no broker config defaults these: no synonym, DEFAULT_CONFIG without an override
    for name in ("remote.storage.enable", "remote.log.copy.disable"):
        assert shown(topic[name]) == ("false", DEFAULT), name
        assert chain(topic[name]) == [], name
    throttled = topic["follower.replication.throttled.replicas"]
    assert shown(throttled) == ("0:0", DYNAMIC_TOPIC)
    assert chain(throttled) == [("follower.replication.throttled.replicas", "0:0", DYNAMIC_TOPIC)]
    assert shown(topic["leader.replication.throttled.replicas"]) == ("", DEFAULT)
    assert chain(topic["leader.replication.throttled.replicas"]) == []
    # one name: unchanged
    assert chain(topic["segment.bytes"]) == [("log.segment.bytes", "1073741824", DEFAULT)]

    # the broker resource: each name shows its own level, as Kafka's
    configs = describe(broker.port, BROKER, "0")
    assert shown(configs["log.roll.jitter.hours"]) == ("2", STATIC)
    assert shown(configs["log.roll.jitter.ms"]) == (None, DEFAULT)  # Kafka: no default
    assert shown(configs["log.flush.scheduler.interval.ms"]) == ("60000", STATIC)
    assert shown(configs["log.flush.interval.ms"]) == (None, DEFAULT)

    # the first name, set dynamically for this broker, comes first and wins
    body = {
        "resources": [
            {
                "resource_type": BROKER,
                "resource_name": "0",
                "configs": [{"name": "log.flush.interval.ms", "value": "1000"}],
            }
        ],
        "validate_only": False,
    }
    answer = request(broker.port, ALTER_CONFIGS, 1, body)["responses"][0]
    assert answer["error_code"] == 0, answer
    flush = describe(broker.port, TOPIC, "t")["flush.ms"]
    assert shown(flush) == ("1000", DYNAMIC_BROKER)
    assert chain(flush) == [
        ("log.flush.interval.ms", "1000", DYNAMIC_BROKER),
        ("log.flush.scheduler.interval.ms", "60000", STATIC),
        ("log.flush.scheduler.interval.ms", LONG_MAX, DEFAULT),
    ]

    # what a client reports (librdkafka asks for synonyms, keyed by name)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, "t")
    entries = admin.describe_configs([resource])[resource].result(20)
    assert ConfigSource(entries["remote.storage.enable"].source) == ConfigSource.DEFAULT_CONFIG
    assert dict(entries["remote.storage.enable"].synonyms) == {}
    assert list(entries["segment.jitter.ms"].synonyms) == ["log.roll.jitter.hours"]
