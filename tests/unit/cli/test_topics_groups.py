"""``topics`` and ``groups`` with the SDK's Admin replaced by a recording fake."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import _common, main
from tiered_mq.cli.groups import total_lag
from tiered_mq.client.admin import (
    ConfigValue,
    GroupDescription,
    GroupListing,
    MemberDescription,
    PartitionDescription,
    PartitionLag,
    TopicDescription,
)
from tiered_mq.client.config import AdminConfig
from tiered_mq.client.errors import ClientError
from tiered_mq.topic_partition import TopicPartition


class FakeAdmin:
    instances: list[FakeAdmin] = []

    def __init__(self, config: AdminConfig) -> None:
        self.config = config
        self.calls: list[tuple[str, Any]] = []
        FakeAdmin.instances.append(self)

    def create_topic(self, *args: Any) -> None:
        self.calls.append(("create", args))
        if args[0] == "exists":
            raise ClientError("TOPIC_ALREADY_EXISTS", "Topic 'exists' already exists.", 36)

    def delete_topic(self, name: str) -> None:
        self.calls.append(("delete", name))

    def list_topics(self, include_internal: bool = False) -> list[str]:
        return ["__consumer_offsets", "a", "b"] if include_internal else ["a", "b"]

    def describe_topic(self, name: str, with_configs: bool = True) -> TopicDescription:
        return TopicDescription(
            name,
            (
                PartitionDescription(0, 1, (1, 2), (1, 2), 0, 42),
                PartitionDescription(1, 2, (2, 1), (2,), 10, 15),
            ),
            {
                "cleanup.policy": ConfigValue("cleanup.policy", "delete", "DEFAULT_CONFIG", True),
                "retention.ms": ConfigValue("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG", False),
            },
        )

    def describe_topic_configs(self, name: str) -> dict[str, ConfigValue]:
        return dict(self.describe_topic(name).configs)

    def alter_topic_config(self, *args: Any) -> None:
        self.calls.append(("alter", args))

    def list_groups(self) -> list[GroupListing]:
        return [
            GroupListing("g1", "STABLE", False, "Classic"),
            GroupListing("g2", "EMPTY", True, "Unknown"),
        ]

    def describe_group(self, group: str) -> GroupDescription:
        if group == "nope":
            return GroupDescription(group, "DEAD", "", 1, (), ())
        return GroupDescription(
            group,
            "STABLE",
            "range",
            1,
            (MemberDescription("m-1", "cli-a", "/127.0.0.1", (TopicPartition("t", 0),)),),
            (
                PartitionLag("t", 0, 40, 50, 10, "m-1"),
                PartitionLag("t", 1, None, 7, None, None),
            ),
        )


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    FakeAdmin.instances.clear()
    monkeypatch.setattr(_common, "Admin", FakeAdmin)
    monkeypatch.delenv("TIERED_MQ_BOOTSTRAP", raising=False)
    return CliRunner()


def test_create_passes_everything(runner: CliRunner) -> None:
    r = runner.invoke(
        main,
        ["topics", "create", "t", "-p", "3", "-r", "2", "-c", "retention.ms=5", "--config", "x=y"],
    )
    assert r.exit_code == 0, r.output
    admin = FakeAdmin.instances[0]
    assert admin.config.bootstrap_servers == "localhost:9092"
    assert admin.calls == [("create", ("t", 3, 2, {"retention.ms": "5", "x": "y"}))]
    assert "Created topic t" in r.output


def test_create_says_partition_for_one(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "create", "t", "-p", "1", "-r", "1"])
    assert r.output == "Created topic t (1 partition, replication factor 1).\n"


def test_create_error_is_named_and_fails(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "create", "exists", "-b", "h:1"])
    assert r.exit_code == 1
    assert "Error: TOPIC_ALREADY_EXISTS: Topic 'exists' already exists." in r.output
    assert FakeAdmin.instances[0].config.bootstrap_servers == "h:1"


def test_bootstrap_from_env(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "list"], env={"TIERED_MQ_BOOTSTRAP": "envhost:1"})
    assert r.exit_code == 0
    assert r.output.splitlines() == ["__consumer_offsets", "a", "b"]  # as kafka-topics.sh
    assert FakeAdmin.instances[0].config.bootstrap_servers == "envhost:1"
    r = runner.invoke(main, ["topics", "list", "--exclude-internal"])
    assert r.output.splitlines() == ["a", "b"]
    r = runner.invoke(main, ["topics", "list", "--internal"])  # the former opt-in: still taken
    assert r.output.splitlines()[0] == "__consumer_offsets"


def test_describe_table_and_configs(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "describe", "t"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "Topic: t  Partitions: 2  ReplicationFactor: 2"
    assert lines[1].split() == [
        "PARTITION",
        "LEADER",
        "REPLICAS",
        "ISR",
        "EARLIEST",
        "LATEST",
        "OFFSETS",
    ]
    assert lines[2].split() == ["0", "1", "1,2", "1,2", "0", "42", "42"]
    assert lines[3].split() == ["1", "2", "2,1", "2", "10", "15", "5"]
    assert "retention.ms" in r.output and "cleanup.policy" not in r.output
    r = runner.invoke(main, ["topics", "describe", "t", "--all-configs"])
    assert "cleanup.policy" in r.output


def test_alter_config(runner: CliRunner) -> None:
    r = runner.invoke(
        main,
        [
            "topics",
            "alter-config",
            "t",
            "--set",
            "cleanup.policy=compact",
            "--delete",
            "retention.ms",
        ],
    )
    assert r.exit_code == 0, r.output
    assert FakeAdmin.instances[0].calls == [
        ("alter", ("t", {"cleanup.policy": "compact"}, ["retention.ms"]))
    ]
    assert runner.invoke(main, ["topics", "alter-config", "t"]).exit_code == 2
    r = runner.invoke(main, ["topics", "alter-config", "t", "--set", "a=1", "--delete", "a"])
    assert r.exit_code == 2 and "both set and deleted" in r.output


def test_alter_config_refuses_to_delete_a_config_name_the_topic_lacks(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "alter-config", "t", "--delete", "retention.mss"])
    assert r.exit_code == 1, r.output
    assert "Error: INVALID_CONFIG: t has no config named retention.mss" in r.output
    assert FakeAdmin.instances[0].calls == []  # nothing altered


def test_delete(runner: CliRunner) -> None:
    r = runner.invoke(main, ["topics", "delete", "t"])
    assert r.exit_code == 0 and FakeAdmin.instances[0].calls == [("delete", "t")]


def test_groups_list_and_describe(runner: CliRunner) -> None:
    r = runner.invoke(main, ["groups", "list"])
    assert r.exit_code == 0
    assert [line.split() for line in r.output.splitlines()] == [
        ["GROUP", "TYPE", "STATE"],  # kafka-consumer-groups.sh --list --type --state
        ["g1", "Classic", "STABLE"],
        ["g2", "Unknown", "EMPTY"],
    ]
    r = runner.invoke(main, ["groups", "describe", "g1"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("Group: g1  State: STABLE  Coordinator: 1  Assignor: range")
    assert lines[1].split() == [
        "TOPIC",
        "PARTITION",
        "COMMITTED",
        "LOG-END",
        "LAG",
        "CLIENT-ID",
        "HOST",
    ]
    assert lines[2].split() == ["t", "0", "40", "50", "10", "cli-a", "/127.0.0.1"]
    assert lines[3].split() == ["t", "1", "-", "7", "-", "-", "-"]
    assert "Total lag: 10" in r.output
    assert "m-1" in r.output and "t-0" in r.output
    assert "Total lag: 10 (1 partition(s) without a committed offset)" in r.output


def test_groups_describe_unknown_group_fails(runner: CliRunner) -> None:
    r = runner.invoke(main, ["groups", "describe", "nope"])
    assert r.exit_code == 1
    assert "Error: GROUP_ID_NOT_FOUND: consumer group nope does not exist" in r.output


SASL = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-256"]


@pytest.mark.parametrize(
    "argv",
    [
        ["topics", "create", "t"],
        ["topics", "list"],
        ["topics", "describe", "t"],
        ["topics", "delete", "t"],
        ["topics", "alter-config", "t", "--set", "a=1"],
        ["groups", "list"],
        ["groups", "describe", "g1"],
    ],
)
def test_every_subcommand_passes_properties(runner: CliRunner, argv: list[str]) -> None:
    r = runner.invoke(main, [*argv, *SASL, "--property", "sasl.username=u=x"])
    assert r.exit_code == 0, r.output
    conf = FakeAdmin.instances[0].config.to_librdkafka()
    assert conf["security.protocol"] == "SASL_PLAINTEXT"
    assert conf["sasl.mechanism"] == "SCRAM-SHA-256"
    assert conf["sasl.username"] == "u=x"
    bad = runner.invoke(main, [*argv, "-X", "no-equals-sign"])
    assert bad.exit_code == 2 and "expected KEY=VALUE" in bad.output


def _group(*lags: tuple[int | None, int]) -> GroupDescription:
    offsets = tuple(
        PartitionLag("t", i, c, end, None if c is None else end - c)
        for i, (c, end) in enumerate(lags)
    )
    return GroupDescription("g", "EMPTY", "", None, (), offsets)


def test_total_lag_counts_committed_partitions_only() -> None:
    assert total_lag(_group((None, 5), (None, 0))) == "Total lag: - (no committed offsets)"
    assert total_lag(_group((3, 5), (None, 9))) == (
        "Total lag: 2 (1 partition(s) without a committed offset)"
    )
    assert total_lag(_group((3, 5), (9, 9))) == "Total lag: 2"
