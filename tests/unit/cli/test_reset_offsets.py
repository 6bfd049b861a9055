"""``groups reset-offsets``: its ISO 8601 durations and date-times, Kafka's CSV plan, and the
command against a fake Admin (several groups, the scopes, the scenarios it adds)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from tiered_mq.cli import _common, main
from tiered_mq.cli.reset_plan import parse_datetime_ms, parse_duration, read_plan, write_plan
from tiered_mq.client.admin import GroupDescription, GroupListing, MemberDescription, PartitionLag
from tiered_mq.client.config import AdminConfig
from tiered_mq.client.errors import ClientError
from tiered_mq.topic_partition import TopicPartition


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30M", timedelta(minutes=30)),
        ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        ("p2d", timedelta(days=2)),
        ("PT0S", timedelta(0)),
    ],
)
def test_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "P", "PT", "1H", "PT1D", "P1H", "-PT1M"])
def test_bad_duration(text: str) -> None:
    with pytest.raises(click.BadParameter, match="expected PnDTnHnMnS"):
        parse_duration(text)


def test_datetime() -> None:
    assert parse_datetime_ms("1970-01-01T00:00:01.250Z") == 1250
    assert parse_datetime_ms("2024-05-01T12:00:00+02:00") == 1714557600000
    with pytest.raises(click.BadParameter, match="ISO 8601"):
        parse_datetime_ms("yesterday")


def test_plan_csv_round_trip() -> None:
    plans = {
        "g,1": {TopicPartition("b", 0): 5, TopicPartition("a", 1): 0},
        "h": {TopicPartition("a", 0): 7},
    }
    text = write_plan(plans, with_group=True)
    assert text == '"g,1",a,1,0\n"g,1",b,0,5\nh,a,0,7\n'  # Kafka's columns, no header
    assert read_plan(text, None, "plan.csv") == plans
    assert read_plan(text, "h", "plan.csv") == plans  # one group asked: its rows are taken
    single = write_plan({"h": plans["h"]}, with_group=False)
    assert single == "a,0,7\n"
    assert read_plan(f"\n{single}\n", "h", "plan.csv") == {"h": plans["h"]}  # blank lines


@pytest.mark.parametrize(
    ("text", "group", "message"),
    [
        ("", "g", "plan.csv has no rows"),
        ("a,0,7\n", None, "which name no group: give one GROUP"),
        ("a,0,7\na,1\n", "g", "plan.csv line 2: expected topic,partition,offset, got 'a,1'"),
        ("g,a,x,7\n", "g", "line 1: expected group,topic,partition,offset, got 'g,a,x,7'"),
        ("a,0\n", "g", "line 1: expected group,topic,partition,offset, got 'a,0'"),
    ],
)
def test_bad_plans(text: str, group: str | None, message: str) -> None:
    with pytest.raises(click.BadParameter, match=re.escape(message)):
        read_plan(text, group, "plan.csv")


class FakeAdmin:
    """Groups g1 (EMPTY, committed t-0=3), g2 (EMPTY, none) and busy (STABLE); topic t has
    partitions 0 and 1, log start 1 and log end 10."""

    instances: list[FakeAdmin] = []

    def __init__(self, config: AdminConfig) -> None:
        self.altered: list[tuple[str, dict[TopicPartition, int]]] = []
        FakeAdmin.instances.append(self)

    def list_groups(self) -> list[GroupListing]:
        return [GroupListing(g, "EMPTY", False) for g in ("busy", "g1", "g2")]

    def describe_group(self, group: str) -> GroupDescription:
        if group == "busy":
            member = MemberDescription("m", "c", "/h", (TopicPartition("t", 0),))
            return GroupDescription(group, "STABLE", "range", 0, (member,), ())
        offsets = (PartitionLag("t", 0, 3, 10, 7),) if group == "g1" else ()
        return GroupDescription(group, "EMPTY", "", 0, (), offsets)

    def partitions_for(self, topic: str) -> list[int]:
        if topic != "t":
            raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", f"topic {topic} does not exist", 3)
        return [0, 1]

    def list_offsets(self, tps: list[TopicPartition], spec: str | int) -> dict[TopicPartition, int]:
        return dict.fromkeys(tps, 1 if spec == "earliest" else 10)

    def alter_group_offsets(self, group: str, offsets: dict[TopicPartition, int]) -> None:
        self.altered.append((group, dict(offsets)))


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    FakeAdmin.instances.clear()
    monkeypatch.setattr(_common, "Admin", FakeAdmin)
    return CliRunner()


def reset(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(main, ["groups", "reset-offsets", *args])


def test_all_groups_skips_active_ones(runner: CliRunner) -> None:
    r = reset(runner, "--all-groups", "--topic", "t", "--to-current", "--execute")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        "Error: assignments can only be reset if the group 'busy' is inactive, but the current"
        " state is STABLE (1 member(s))"
    ]
    assert [line.split() for line in r.stdout.splitlines()] == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
        ["g1", "t", "0", "3"],  # committed: kept
        ["g1", "t", "1", "10"],  # none: the log end offset, as Kafka's --to-current
        ["g2", "t", "0", "10"],
        ["g2", "t", "1", "10"],
    ]
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert FakeAdmin.instances[0].altered == [("g1", {t0: 3, t1: 10}), ("g2", {t0: 10, t1: 10})]


def test_all_topics_and_export(runner: CliRunner) -> None:
    r = reset(runner, "g1", "g2", "--all-topics", "--shift-by", "-5", "--export")
    assert r.exit_code == 0, r.output
    assert r.stdout == "g1,t,0,1\n"  # 3 - 5, clamped to the log start; g2 has nothing
    assert r.stderr.splitlines() == [
        "Note: t-0: offset -2 is outside the log; using the log start offset 1",
        "Note: group 'g2' has no committed offsets: nothing to reset",
        "Dry run: nothing changed; add --execute to commit these offsets.",
    ]
    assert reset(runner, "g1", "--all-topics", "--to-latest", "--export").stdout == "t,0,10\n"
    assert FakeAdmin.instances[0].altered == []


def test_from_file(runner: CliRunner, tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("g1,t,1,4\ng2,t,0,99\n")
    r = reset(runner, "--all-groups", "--from-file", str(plan), "--execute")
    assert r.exit_code == 1
    assert "Error: no reset plan for group 'busy'" not in r.stderr  # refused for its members
    assert [line.split()[:2] for line in r.stderr.splitlines()] == [
        ["Error:", "assignments"],
        ["Note:", "t-0:"],  # 99 clamped to the log end offset
    ]
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert FakeAdmin.instances[0].altered == [("g1", {t1: 4}), ("g2", {t0: 10})]

    plan.write_text("t,1,4\n")
    r = reset(runner, "g2", "g1", "--from-file", str(plan))
    assert r.exit_code == 2 and "which name no group" in r.output
    plan.write_text("g1,x,0,4\n")
    r = reset(runner, "g1", "g2", "--from-file", str(plan))
    assert r.exit_code == 1
    assert "Error: UNKNOWN_TOPIC_OR_PARTITION: topic x does not exist" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["g1", "--topic", "t"], "give exactly one of --to-earliest"),
        (["g1", "--topic", "t", "--to-current", "--to-latest"], "give exactly one of"),
        (["g1", "--to-current"], "give --topic TOPIC[:P,...] (repeatable) or --all-topics"),
        (["g1", "--topic", "t", "--all-topics", "--to-current"], "or --all-topics"),
        (["--topic", "t", "--to-current"], "give GROUP (one or more) or --all-groups"),
        (["g1", "--all-groups", "--topic", "t", "--to-current"], "or --all-groups"),
    ],
)
def test_usage_errors(runner: CliRunner, args: list[str], message: str) -> None:
    r = reset(runner, *args)
    assert r.exit_code == 2 and message in r.output
    assert FakeAdmin.instances == []


def test_from_file_names_its_own_partitions(runner: CliRunner, tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("t,0,1\n")
    r = reset(runner, "g1", "--from-file", str(plan), "--all-topics")
    assert r.exit_code == 2 and "--from-file names its partitions" in r.output
