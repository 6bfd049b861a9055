"""Local retention is checked as Kafka checks it (``validateRemoteStorageRetentionSize/Time``):
on a tiered topic ``local.retention.ms`` (``.bytes``) = -1 while ``retention.ms`` (``.bytes``)
is finite is INVALID_CONFIG, where it used to be accepted and kept the local copies forever,
past the topic's retention; an untiered topic's local retention, never read, is not checked
(it was refused when above retention), and ``retention.bytes`` takes any negative value as "no
limit" (it was refused below -1). On a broker with a cold tier the broker defaults are checked
too. Driven with CreateTopics and IncrementalAlterConfigs requests on an in-process broker."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, start_broker

CREATE_TOPICS, INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CONFIGS = 19, 44, 32
INVALID_CONFIG, INVALID_REQUEST = 40, 42
TOPIC, BROKER = 2, 4
TIERED = {"remote.storage.enable": "true", "retention.ms": "86400000"}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    broker = await start_broker(tmp_path, cold_url=f"memory://{uuid.uuid4().hex}/p")
    try:
        c = await Client.connect(broker.port)
        try:
            yield c
        finally:
            await c.close()
    finally:
        await broker.close()


async def create(client: Client, name: str, configs: dict[str, str]) -> dict[str, Any]:
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": 1,
                "replication_factor": 1,
                "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        ],
        "timeout_ms": 5000,
        "validate_only": False,
    }
    topic: dict[str, Any] = (await client.call(CREATE_TOPICS, 5, body))["topics"][0]
    return topic


async def set_config(client: Client, rtype: int, name: str, key: str, value: str) -> dict[str, Any]:
    config = {"name": key, "config_operation": 0, "value": value}
    body = {
        "resources": [{"resource_type": rtype, "resource_name": name, "configs": [config]}],
        "validate_only": False,
    }
    response: dict[str, Any] = (await client.call(INCREMENTAL_ALTER_CONFIGS, 1, body))["responses"][
        0
    ]
    return response


async def described(client: Client, topic: str, key: str) -> str:
    body = {
        "resources": [
            {"resource_type": TOPIC, "resource_name": topic, "configuration_keys": [key]}
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    value: str = (await client.call(DESCRIBE_CONFIGS, 3, body))["results"][0]["configs"][0]["value"]
    return value


async def test_unbounded_local_retention_is_refused_on_a_tiered_topic(client: Client) -> None:
    refused = await create(client, "tiered-forever", {**TIERED, "local.retention.ms": "-1"})
    assert (refused["error_code"], refused["error_message"]) == (
        INVALID_CONFIG,
        "Invalid value -1 for configuration local.retention.ms: Value must not be -1 as "
        "retention.ms value is set as 86400000.",
    )
    assert (await create(client, "tiered", {**TIERED, "retention.bytes": "1000"}))[
        "error_code"
    ] == 0
    answer = await set_config(client, TOPIC, "tiered", "local.retention.bytes", "-1")
    assert answer["error_code"] == INVALID_CONFIG
    assert "local.retention.bytes" in answer["error_message"]
    assert await described(client, "tiered", "local.retention.bytes") == "-2"
    above = await set_config(client, TOPIC, "tiered", "local.retention.bytes", "2000")
    assert above["error_code"] == INVALID_CONFIG
    assert (await set_config(client, TOPIC, "tiered", "local.retention.bytes", "500"))[
        "error_code"
    ] == 0


async def test_an_untiered_topic_takes_what_kafka_takes(client: Client) -> None:
    configs = {"retention.ms": "1000", "local.retention.ms": "2000", "retention.bytes": "-5"}
    created = await create(client, "plain", configs)
    assert (created["error_code"], created["error_message"]) == (0, None)
    assert await described(client, "plain", "local.retention.ms") == "2000"
    assert await described(client, "plain", "retention.bytes") == "-5"


async def test_broker_defaults_keep_local_retention_bounded(client: Client) -> None:
    answer = await set_config(client, BROKER, "", "log.local.retention.ms", "-1")
    assert answer["error_code"] == INVALID_REQUEST
    assert "local.retention.ms" in answer["error_message"]
    assert (await set_config(client, BROKER, "", "log.local.retention.ms", "1000"))[
        "error_code"
    ] == 0
