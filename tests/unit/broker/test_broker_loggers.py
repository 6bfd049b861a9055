"""BROKER_LOGGER resources (KIP-412) and the resource types this broker does not serve, through
an in-process broker with raw requests, as Kafka's ConfigHelper, ConfigAdminManager and
RuntimeLoggerManager answer them: loggers listed with their levels, levels set and removed by
IncrementalAlterConfigs (and the records they let through change), Kafka's refusals, ACLs on
the cluster; an unknown resource type fails a whole DescribeConfigs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import ACLS_ON, Client, serving
from tiered_mq.broker.acl.binding import AclOperation, AclPermissionType, ResourceType
from tiered_mq.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    InvalidConfigError,
    InvalidRequestError,
)
from tiered_mq.protocol.api_versions import ApiKey

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
INVALID_REQUEST, INVALID_CONFIG = InvalidRequestError.errno, InvalidConfigError.errno
CLUSTER_DENIED = ClusterAuthorizationFailedError.errno
WATCHED = "tiered_mq.broker.dynamic_config"  # logs each dynamic broker config change at INFO


@pytest.fixture(autouse=True)
def levels_restored() -> Iterator[None]:
    """Log levels are process-wide: every logger gets its own level back after the test."""
    loggers = [logging.getLogger()] + [
        logging.getLogger(n) for n in list(logging.Logger.manager.loggerDict)
    ]
    saved = [(lg, lg.level) for lg in loggers]
    yield
    for lg, level in saved:
        lg.setLevel(level)


async def describe(client: Client, *resources: tuple[int, str]) -> list[dict[str, Any]]:
    body = {
        "resources": [
            {"resource_type": t, "resource_name": n, "configuration_keys": None}
            for t, n in resources
        ],
        "include_synonyms": False,
    }
    return list((await client.call(ApiKey.DESCRIBE_CONFIGS, 3, body))["results"])


async def loggers(client: Client) -> dict[str, str]:
    (result,) = await describe(client, (BROKER_LOGGER, "0"))
    assert result["error_code"] == 0, result
    assert {(c["config_source"], c["read_only"], c["is_sensitive"]) for c in result["configs"]} == {
        (6, False, False)  # DYNAMIC_BROKER_LOGGER_CONFIG
    }
    return {c["name"]: c["value"] for c in result["configs"]}


async def alter(
    client: Client,
    *ops: tuple[int, str, str | None],
    name: str = "0",
    rtype: int = BROKER_LOGGER,
    validate_only: bool = False,
) -> tuple[int, str | None]:
    configs = [{"name": k, "config_operation": op, "value": v} for op, k, v in ops]
    body = {
        "resources": [{"resource_type": rtype, "resource_name": name, "configs": configs}],
        "validate_only": validate_only,
    }
    (answer,) = (await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body))["responses"]
    return answer["error_code"], answer["error_message"]


async def set_broker_config(client: Client, value: str) -> None:
    """A dynamic broker config change, which ``WATCHED`` logs at INFO."""
    ops = [{"name": "log.retention.ms", "config_operation": SET, "value": value}]
    body = {
        "resources": [{"resource_type": BROKER, "resource_name": "", "configs": ops}],
        "validate_only": False,
    }
    r = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body)
    assert r["responses"][0]["error_code"] == 0


def logged(caplog: pytest.LogCaptureFixture, value: str) -> bool:
    return any(r.name == WATCHED and value in r.getMessage() for r in caplog.records)


async def test_levels_are_listed_set_and_removed(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    logging.getLogger().setLevel(logging.INFO)
    listed = await loggers(client)
    assert listed["root"] == "INFO" and listed[WATCHED] == "INFO"
    assert "tiered_mq.broker" in listed  # a package: setting it sets its modules
    assert all(n == "root" or n.startswith("tiered_mq") for n in listed)

    caplog.set_level(logging.DEBUG)  # the capture lets every record through: loggers decide
    logging.getLogger().setLevel(logging.INFO)
    await set_broker_config(client, "1000001")
    assert logged(caplog, "1000001")

    assert await alter(client, (SET, WATCHED, "ERROR")) == (0, None)
    after = await loggers(client)
    assert after[WATCHED] == "ERROR" and after["root"] == "INFO"
    await set_broker_config(client, "1000002")
    assert not logged(caplog, "1000002")  # its INFO line is no longer written

    assert await alter(client, (SET, "tiered_mq.broker", "TRACE")) == (0, None)
    assert (await loggers(client))["tiered_mq.broker.partition"] == "TRACE"  # inherited
    assert await alter(client, (DELETE, WATCHED, None), (DELETE, "tiered_mq.broker", None)) == (
        0,
        None,
    )
    assert (await loggers(client))[WATCHED] == "INFO"  # root's again
    await set_broker_config(client, "1000003")
    assert logged(caplog, "1000003")

    # validate_only: checked, not applied
    assert await alter(client, (SET, WATCHED, "OFF"), validate_only=True) == (0, None)
    assert (await loggers(client))[WATCHED] == "INFO"
    assert await alter(client, (SET, "root", "WARN")) == (0, None)
    assert (await loggers(client))[WATCHED] == "WARN"


async def test_kafkas_refusals(client: Client) -> None:
    before = await loggers(client)
    refused = {
        "APPEND": await alter(client, (APPEND, WATCHED, "DEBUG")),
        "SUBTRACT": await alter(client, (SUBTRACT, WATCHED, "DEBUG")),
        "unknown logger": await alter(client, (SET, "tiered_mq.nothing.here", "DEBUG")),
        "lower-case level": await alter(client, (SET, WATCHED, "debug")),
        "DELETE root": await alter(client, (DELETE, "root", None)),
        "other broker": await alter(client, (SET, WATCHED, "DEBUG"), name="7"),
        "no broker id": await alter(client, (SET, WATCHED, "DEBUG"), name=""),
        # one bad op: none of the resource's ops is applied
        "one of two": await alter(client, (SET, WATCHED, "DEBUG"), (SET, "x", "DEBUG")),
    }
    assert {k: code for k, (code, _) in refused.items()} == {
        "APPEND": INVALID_REQUEST,
        "SUBTRACT": INVALID_REQUEST,
        "unknown logger": INVALID_CONFIG,
        "lower-case level": INVALID_CONFIG,
        "DELETE root": INVALID_REQUEST,
        "other broker": INVALID_REQUEST,
        "no broker id": INVALID_REQUEST,
        "one of two": INVALID_CONFIG,
    }
    assert refused["lower-case level"][1] == (
        f"Cannot set the log level of {WATCHED} to debug as it is not a supported log level. "
        "Valid log levels are DEBUG, ERROR, FATAL, INFO, OFF, TRACE, WARN"
    )
    assert refused["unknown logger"][1] == "Logger tiered_mq.nothing.here does not exist!"
    assert await loggers(client) == before

    # DescribeConfigs names this broker only
    for name, message in (
        ("", "Broker id must not be empty"),
        ("x", "Broker id must be an integer, but it is: x"),
        ("3", "Unexpected broker id, expected 0 but received 3"),
    ):
        (result,) = await describe(client, (BROKER_LOGGER, name))
        assert (result["error_code"], result["error_message"]) == (INVALID_REQUEST, message)

    # legacy AlterConfigs does not know loggers (KIP-412 is incremental only)
    body = {
        "resources": [
            {
                "resource_type": BROKER_LOGGER,
                "resource_name": "0",
                "configs": [{"name": WATCHED, "value": "DEBUG"}],
            }
        ],
        "validate_only": False,
    }
    (answer,) = (await client.call(ApiKey.ALTER_CONFIGS, 1, body))["responses"]
    assert (answer["error_code"], answer["error_message"]) == (
        INVALID_REQUEST,
        "Unknown resource type 8",
    )
    assert await loggers(client) == before


def _deny(operation: AclOperation, rtype: ResourceType, name: str) -> dict[str, Any]:
    return {
        "resource_type": rtype,
        "resource_name": name,
        "resource_pattern_type": 3,  # literal
        "principal": "User:ANONYMOUS",
        "host": "*",
        "operation": operation,
        "permission_type": AclPermissionType.DENY,
    }


async def test_acls_on_the_cluster(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **ACLS_ON) as (_, client):
        assert await alter(client, (SET, WATCHED, "DEBUG")) == (0, None)
        denials = [
            _deny(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, "kafka-cluster"),
            _deny(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, "kafka-cluster"),
            _deny(AclOperation.DESCRIBE_CONFIGS, ResourceType.GROUP, "g"),
        ]
        r = await client.call(ApiKey.CREATE_ACLS, 1, {"creations": denials})
        assert [c["error_code"] for c in r["results"]] == [0, 0, 0]
        assert (await alter(client, (SET, WATCHED, "ERROR")))[0] == CLUSTER_DENIED
        assert logging.getLogger(WATCHED).level == logging.DEBUG  # unchanged
        results = await describe(client, (BROKER_LOGGER, "0"), (GROUP, "g"), (CLIENT_METRICS, "m"))
        assert [(r["error_code"], r["configs"]) for r in results] == [
            (CLUSTER_DENIED, []),
            (GroupAuthorizationFailedError.errno, []),
            (CLUSTER_DENIED, []),
        ]


async def test_resource_types_not_served(client: Client) -> None:
    created = await client.call(
        ApiKey.CREATE_TOPICS,
        4,
        {
            "topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    assert created["topics"][0]["error_code"] == 0
    # a type Kafka knows but this broker keeps no configs of: that resource alone fails
    results = await describe(client, (TOPIC, "t"), (GROUP, "g"), (CLIENT_METRICS, "m"))
    assert [r["error_code"] for r in results] == [0, INVALID_REQUEST, INVALID_REQUEST]
    assert results[0]["configs"]
    # a type Kafka does not know: the whole request fails, as KafkaApis throws
    results = await describe(client, (TOPIC, "t"), (99, "x"))
    assert [(r["resource_type"], r["error_code"], r["configs"]) for r in results] == [
        (TOPIC, INVALID_REQUEST, []),
        (99, INVALID_REQUEST, []),
    ]
    assert results[0]["error_message"].startswith("This most likely occurs because of a request")
    # (Incremental)AlterConfigs answer such types per resource (ConfigAdminManager.preprocess)
    for rtype, message in (
        (99, "Unknown resource type 99"),
        (GROUP, "Config type groups is not supported by this broker"),
        (CLIENT_METRICS, "Config type client-metrics is not supported by this broker"),
    ):
        assert await alter(client, (SET, "k", "v"), name="x", rtype=rtype) == (
            INVALID_REQUEST,
            message,
        )
