"""``tiered-mq configs`` against a real ``tiered-mq dev`` broker, as an operator would use
``kafka-configs.sh --entity-type brokers``: the cluster-wide default and one broker's level,
seen by ``configs describe``, by the topics without their own override and by a producer; the
broker's refusals as one line; and topics through ``configs --topic``."""

from __future__ import annotations

import re

import pytest
from click.testing import Result

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_dynamic_configs import produce_big
from tests.integration.test_cli_commands import fresh, ok, run

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(shared_broker: BrokerProcess) -> str:
    return shared_broker.bootstrap


def table(result: Result) -> dict[str, list[str]]:
    """The rows of a configs table by name: [value, source, synonyms...] ({} without one)."""
    lines = ok(result).stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("NAME ")), len(lines))
    return {cells[0]: cells[1:] for cells in (re.split(" {2,}", ln) for ln in lines[start + 1 :])}


def topic_config(bootstrap: str, topic: str, key: str) -> list[str]:
    """[value, source] of one config of ``topics describe TOPIC --all-configs``."""
    out = ok(run(bootstrap, "topics", "describe", topic, "--all-configs")).stdout
    return next(line.split()[1:] for line in out.splitlines() if line.startswith(f"{key} "))


def test_broker_default_and_one_broker(bootstrap: str) -> None:
    topic = fresh("plain")
    ok(run(bootstrap, "topics", "create", topic))
    r = ok(run(bootstrap, "configs", "describe", "--broker-default"))
    assert r.stdout.splitlines() == [
        "Broker: cluster-wide default",
        "No configs set as the cluster-wide default.",
    ]
    assert produce_big(bootstrap, topic) is not None  # 1.5 MB: above Kafka's default

    r = run(bootstrap, "configs", "alter", "--broker-default",
            "--set", "log.retention.ms=86400000", "--set", "message.max.bytes=2000000")  # fmt: skip
    assert ok(r).stdout == (
        "Altered configs of the broker default: log.retention.ms=86400000"
        " message.max.bytes=2000000\n"
    )
    default = "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert table(run(bootstrap, "configs", "describe", "--broker-default")) == {
        "log.retention.ms": ["86400000", default],
        "message.max.bytes": ["2000000", default],
    }
    assert topic_config(bootstrap, topic, "retention.ms") == ["86400000", default]
    assert produce_big(bootstrap, topic) is None  # the live partition took the new limit

    ok(run(bootstrap, "configs", "alter", "--broker", "0", "--set", "log.retention.ms=7200000"))
    described = table(run(bootstrap, "configs", "describe", "--broker", "0", "--synonyms"))
    assert described["log.retention.ms"] == [
        "7200000",
        "DYNAMIC_BROKER_CONFIG",
        "DYNAMIC_BROKER_CONFIG:log.retention.ms=7200000,"
        f" {default}:log.retention.ms=86400000, DEFAULT_CONFIG:log.retention.hours=168",
    ]
    assert described["message.max.bytes"][:2] == ["2000000", default]
    assert "num.partitions" not in described  # a default: only with --all-configs
    everything = table(run(bootstrap, "configs", "describe", "--broker", "0", "--all"))
    assert everything["num.partitions"][:2] == ["1", "DEFAULT_CONFIG"]
    assert topic_config(bootstrap, topic, "retention.ms") == ["7200000", "DYNAMIC_BROKER_CONFIG"]

    # deleting a level brings back the one below
    ok(run(bootstrap, "configs", "alter", "--broker", "0", "--delete", "log.retention.ms"))
    assert topic_config(bootstrap, topic, "retention.ms") == ["86400000", default]
    r = run(bootstrap, "configs", "alter", "--broker-default",
            "--delete", "log.retention.ms", "--delete", "message.max.bytes")  # fmt: skip
    ok(r)
    assert topic_config(bootstrap, topic, "retention.ms") == ["604800000", "DEFAULT_CONFIG"]
    assert produce_big(bootstrap, topic) is not None


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["alter", "--broker-default", "--set", "num.partitions=3"],
            "Error: INVALID_REQUEST: alter configs of the broker default: Cannot update these"
            " configs dynamically: [num.partitions]",
        ),
        (
            ["alter", "--broker", "0", "--set", "log.retention.ms=tomorrow"],
            "Error: INVALID_REQUEST: alter configs of broker 0: Invalid value tomorrow for"
            " configuration log.retention.ms: Not a number of type LONG",
        ),
        (
            ["alter", "--broker", "0", "--delete", "log.segment.bytes"],
            "Error: INVALID_CONFIG: broker 0 has no dynamic config named log.segment.bytes",
        ),
        (
            ["describe", "--broker", "7"],
            "Error: BROKER_NOT_AVAILABLE: no broker 7 in the cluster (brokers: 0)",
        ),
    ],
)
def test_refusals_are_one_line(bootstrap: str, args: list[str], error: str) -> None:
    r = run(bootstrap, "configs", *args)
    assert (r.exit_code, r.stdout, r.stderr.splitlines()) == (1, "", [error])
    assert table(run(bootstrap, "configs", "describe", "--broker", "0")) == {}  # unchanged


def test_topic_configs_through_configs(bootstrap: str) -> None:
    topic = fresh("configs-topic")
    ok(run(bootstrap, "topics", "create", topic, "-c", "retention.ms=3600000"))
    assert table(run(bootstrap, "configs", "describe", "--topic", topic)) == {
        "retention.ms": ["3600000", "DYNAMIC_TOPIC_CONFIG"]
    }
    r = ok(run(bootstrap, "configs", "alter", "--topic", topic, "--set", "segment.bytes=1048576",
               "--delete", "retention.ms"))  # fmt: skip
    assert r.stdout == f"Altered configs of {topic}: segment.bytes=1048576 -retention.ms\n"
    assert topic_config(bootstrap, topic, "segment.bytes") == ["1048576", "DYNAMIC_TOPIC_CONFIG"]
    assert topic_config(bootstrap, topic, "retention.ms")[1] == "DEFAULT_CONFIG"
    gone = run(bootstrap, "configs", "describe", "--topic", fresh("missing"))
    assert gone.exit_code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in gone.stderr
