"""``configs`` with the SDK's Admin replaced by a recording fake: which entity each option
names, the table, ``--all-configs`` and ``--synonyms``, and the errors."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import _common, main
from tiered_mq.client.admin import ConfigSynonym, ConfigValue
from tiered_mq.client.config import AdminConfig
from tiered_mq.client.errors import ClientError

RETENTION = ConfigValue(
    "log.retention.ms",
    "7200000",
    "DYNAMIC_BROKER_CONFIG",
    False,
    synonyms=(
        ConfigSynonym("log.retention.ms", "7200000", "DYNAMIC_BROKER_CONFIG"),
        ConfigSynonym("log.retention.ms", "86400000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ConfigSynonym("log.retention.hours", "168", "DEFAULT_CONFIG"),
    ),
)
SEGMENT = ConfigValue("log.segment.bytes", "2097152", "DYNAMIC_DEFAULT_BROKER_CONFIG", False)
THREADS = ConfigValue("num.io.threads", "8", "DEFAULT_CONFIG", True, read_only=True)
JAAS = ConfigValue("sasl.jaas.config", None, "STATIC_BROKER_CONFIG", False, True, True)


class FakeAdmin:
    instances: list[FakeAdmin] = []

    def __init__(self, config: AdminConfig) -> None:
        self.config = config
        self.calls: list[tuple[Any, ...]] = []
        FakeAdmin.instances.append(self)

    def describe_broker_configs(self, broker: int | None = None) -> dict[str, ConfigValue]:
        self.calls.append(("describe", broker))
        if broker is None:
            return {"log.segment.bytes": SEGMENT}
        if broker == 9:
            return {}
        return {c.name: c for c in (RETENTION, SEGMENT, THREADS, JAAS)}

    def alter_broker_configs(
        self, broker: int | None, set_configs: Mapping[str, str], delete: Sequence[str] = ()
    ) -> None:
        self.calls.append(("alter", broker, dict(set_configs), list(delete)))
        if "num.partitions" in set_configs:
            raise ClientError(
                "INVALID_REQUEST",
                f"alter configs of broker {broker}: Cannot update these configs dynamically:"
                " [num.partitions]",
                42,
            )

    def describe_topic_configs(self, name: str) -> dict[str, ConfigValue]:
        self.calls.append(("describe topic", name))
        own = ConfigValue("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG", False)
        return {"retention.ms": own}

    def alter_topic_config(self, *args: Any) -> None:
        self.calls.append(("alter topic", *args))


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    FakeAdmin.instances.clear()
    monkeypatch.setattr(_common, "Admin", FakeAdmin)
    return CliRunner()


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()]


def test_describe_a_broker(runner: CliRunner) -> None:
    r = runner.invoke(main, ["configs", "describe", "--broker", "0"])
    assert r.exit_code == 0, r.output
    assert rows(r.output) == [
        ["Broker:", "0"],
        ["Configs", "(not", "defaults):"],
        ["NAME", "VALUE", "SOURCE"],
        ["log.retention.ms", "7200000", "DYNAMIC_BROKER_CONFIG"],
        ["log.segment.bytes", "2097152", "DYNAMIC_DEFAULT_BROKER_CONFIG"],
        ["sasl.jaas.config", "*****", "STATIC_BROKER_CONFIG"],
    ]
    assert FakeAdmin.instances[0].calls == [("describe", 0)]

    r = runner.invoke(main, ["configs", "describe", "--broker", "0", "--all", "--synonyms"])
    lines = r.output.splitlines()
    assert lines[1] == "Configs:"
    assert lines[2].split() == ["NAME", "VALUE", "SOURCE", "SYNONYMS"]
    assert re.split(" {2,}", lines[3]) == [
        "log.retention.ms",
        "7200000",
        "DYNAMIC_BROKER_CONFIG",
        "DYNAMIC_BROKER_CONFIG:log.retention.ms=7200000,"
        " DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=86400000,"
        " DEFAULT_CONFIG:log.retention.hours=168",
    ]
    assert lines[5].split() == ["num.io.threads", "8", "DEFAULT_CONFIG", "-"]


def test_describe_the_broker_default(runner: CliRunner) -> None:
    r = runner.invoke(main, ["configs", "describe", "--broker-default"])
    assert r.exit_code == 0, r.output
    assert rows(r.output)[0] == ["Broker:", "cluster-wide", "default"]
    assert rows(r.output)[-1] == ["log.segment.bytes", "2097152", "DYNAMIC_DEFAULT_BROKER_CONFIG"]
    assert FakeAdmin.instances[0].calls == [("describe", None)]


def test_one_entity_exactly(runner: CliRunner) -> None:
    for argv in ([], ["--broker", "0", "--broker-default"], ["--topic", "t", "--broker", "1"]):
        r = runner.invoke(main, ["configs", "describe", *argv])
        assert r.exit_code == 2
        assert "give exactly one of --broker ID, --broker-default, --topic TOPIC" in r.output
    assert FakeAdmin.instances == []


def test_alter_a_broker_and_the_default(runner: CliRunner) -> None:
    changes = ["--set", "log.retention.ms=1", "--delete", "log.segment.bytes"]
    r = runner.invoke(main, ["configs", "alter", "--broker-default", *changes])
    assert r.exit_code == 0, r.output
    assert r.output == (
        "Altered configs of the broker default: log.retention.ms=1 -log.segment.bytes\n"
    )
    assert FakeAdmin.instances[0].calls == [
        ("describe", None),
        ("alter", None, {"log.retention.ms": "1"}, ["log.segment.bytes"]),
    ]
    r = runner.invoke(main, ["configs", "alter", "--broker", "0", "--set", "a=1"])
    assert r.output == "Altered configs of broker 0: a=1\n"
    assert FakeAdmin.instances[1].calls == [("alter", 0, {"a": "1"}, [])]


def test_alter_refusals(runner: CliRunner) -> None:
    # set on the cluster default, not on broker 0: nothing to delete there (kafka-configs.sh)
    r = runner.invoke(main, ["configs", "alter", "--broker", "0", "--delete", "log.segment.bytes"])
    assert r.exit_code == 1
    assert r.output == (
        "Error: INVALID_CONFIG: broker 0 has no dynamic config named log.segment.bytes\n"
    )
    assert FakeAdmin.instances[0].calls == [("describe", 0)]  # nothing altered

    r = runner.invoke(main, ["configs", "alter", "--broker", "0", "--set", "num.partitions=3"])
    assert r.exit_code == 1
    assert r.output == (
        "Error: INVALID_REQUEST: alter configs of broker 0: Cannot update these configs"
        " dynamically: [num.partitions]\n"
    )
    assert runner.invoke(main, ["configs", "alter", "--broker", "0"]).exit_code == 2
    r = runner.invoke(main, ["configs", "alter", "--broker", "0", "--set", "a=1", "--delete", "a"])
    assert r.exit_code == 2 and "both set and deleted: a" in r.output


def test_topics_through_configs(runner: CliRunner) -> None:
    r = runner.invoke(main, ["configs", "describe", "--topic", "t"])
    assert r.exit_code == 0, r.output
    assert rows(r.output)[0] == ["Topic:", "t"]
    assert rows(r.output)[-1] == ["retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG"]
    r = runner.invoke(main, ["configs", "alter", "--topic", "t", "--delete", "retention.ms"])
    assert r.output == "Altered configs of t: -retention.ms\n"
    assert FakeAdmin.instances[1].calls == [
        ("describe topic", "t"),
        ("alter topic", "t", {}, ["retention.ms"]),
    ]
    r = runner.invoke(main, ["configs", "alter", "--topic", "t", "--delete", "retention.mss"])
    assert r.exit_code == 1
    assert "Error: INVALID_CONFIG: t has no config named retention.mss" in r.output


def test_properties_reach_the_client(runner: CliRunner) -> None:
    login = ["-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512"]
    r = runner.invoke(main, ["configs", "describe", "--broker-default", "-b", "h:1", *login])
    assert r.exit_code == 0, r.output
    conf = FakeAdmin.instances[0].config.to_librdkafka()
    assert conf["bootstrap.servers"] == "h:1"
    assert (conf["security.protocol"], conf["sasl.mechanism"]) == ("SASL_SSL", "SCRAM-SHA-512")
