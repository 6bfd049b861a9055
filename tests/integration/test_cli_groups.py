"""``tiered-mq groups`` against a real ``tiered-mq dev`` broker, with groups made by
confluent-kafka consumers: what ``describe`` shows of a live group, ``delete`` and
``reset-offsets`` (scopes, scenarios, Kafka's CSV plans, several groups) as
``kafka-consumer-groups.sh`` does them."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import Result
from confluent_kafka import Consumer, TopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_cli_commands import ok, run
from tests.integration.test_groups_confluent import create_topic, group_consumer, poll_until
from tests.integration.test_groups_offset_delete import commit, listed

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(shared_broker: BrokerProcess) -> str:
    return shared_broker.bootstrap


def produce(bootstrap: str, topic: str, count: int, partition: int = 0) -> None:
    lines = "".join(f"m{i}\n" for i in range(count))
    ok(run(bootstrap, "produce", topic, "-p", str(partition), input=lines))


def topic_with(bootstrap: str, topic: str, records: int, partitions: int = 1) -> None:
    """Create ``topic`` and produce ``records`` records ``m0``, ``m1``... to partition 0."""
    create_topic(bootstrap, topic, partitions)
    produce(bootstrap, topic, records)


def joined(bootstrap: str, group: str, topic: str, consumers: list[Consumer]) -> Consumer:
    """A confluent-kafka consumer of ``topic`` that has joined ``group`` and got partitions."""
    consumer = group_consumer(bootstrap, group, **{"client.id": f"{group}-client"})
    consumers.append(consumer)
    consumer.subscribe([topic])
    poll_until([consumer], lambda: bool(consumer.assignment()), timeout=30)
    return consumer


def rows(output: str, topic: str) -> list[list[str]]:
    """The partition rows of ``groups describe`` for ``topic``, split into cells."""
    return [line.split() for line in output.splitlines() if line.startswith(f"{topic} ")]


def test_describe_shows_the_member_host_as_kafka_does(
    bootstrap: str, consumers: list[Consumer]
) -> None:
    topic, group = "describe-host", "describe-host-group"
    topic_with(bootstrap, topic, 3)
    consumer = joined(bootstrap, group, topic, consumers)
    consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)

    out = ok(run(bootstrap, "groups", "describe", group)).output
    assert rows(out, topic) == [[topic, "0", "2", "3", "1", f"{group}-client", "/127.0.0.1"]]
    member = next(line.split() for line in out.splitlines() if line.endswith(f"{topic}-0"))
    assert member[1:] == [f"{group}-client", "/127.0.0.1", f"{topic}-0"]


def test_describe_shows_a_negative_lag_and_no_lag_without_a_committed_offset(
    bootstrap: str,
) -> None:
    """Lag is log end offset - committed offset, as Kafka prints it: negative for an offset
    committed past the log end, ``-`` for a partition without a committed offset."""
    topic, group = "describe-lag", "describe-lag-group"
    topic_with(bootstrap, topic, 3, 2)
    commit(bootstrap, group, {(topic, 0): 10})
    consumer = group_consumer(bootstrap, group)
    try:  # the group now also owns partition 1, which has no committed offset
        consumer.subscribe([topic])
        poll_until([consumer], lambda: len(consumer.assignment()) == 2, timeout=30)
        out = ok(run(bootstrap, "groups", "describe", group)).output
    finally:
        consumer.close()
    assert [row[:5] for row in rows(out, topic)] == [
        [topic, "0", "10", "3", "-7"],
        [topic, "1", "-", "0", "-"],
    ]
    assert "Total lag: -7 (1 partition(s) without a committed offset)" in out


def test_delete_groups(bootstrap: str, consumers: list[Consumer]) -> None:
    """Empty groups go with their offsets; one with members is refused (NON_EMPTY_GROUP),
    an unknown one too (GROUP_ID_NOT_FOUND); the others are still deleted."""
    topic = "delete-groups"
    create_topic(bootstrap, topic, 1)
    commit(bootstrap, "delete-empty-1", {(topic, 0): 0})
    commit(bootstrap, "delete-empty-2", {(topic, 0): 0})
    active = joined(bootstrap, "delete-active", topic, consumers)

    r = run(bootstrap, "groups", "delete", "delete-empty-1", "delete-active", "delete-unknown")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == ["Deleted consumer group 'delete-empty-1'."]
    assert r.stderr.splitlines() == [
        "Error: NON_EMPTY_GROUP: consumer group 'delete-active' not deleted:"
        " it has active members; stop its consumers first",
        "Error: GROUP_ID_NOT_FOUND: consumer group 'delete-unknown' not deleted: no such group",
    ]
    assert listed(bootstrap, "delete-empty-1") == {}
    assert listed(bootstrap, "delete-empty-2") == {(topic, 0): 0}

    active.close()
    r = ok(run(bootstrap, "groups", "delete", "delete-active", "delete-empty-2"))
    assert r.stdout.splitlines() == [
        "Deleted consumer group 'delete-active'.",
        "Deleted consumer group 'delete-empty-2'.",
    ]
    gone = run(bootstrap, "groups", "describe", "delete-active")
    assert gone.exit_code == 1 and "GROUP_ID_NOT_FOUND" in gone.stderr


def reset(bootstrap: str, group: str, *args: str) -> Result:
    return run(bootstrap, "groups", "reset-offsets", group, *args)


def plan(result: Result) -> list[list[str]]:
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    return [line.split()[1:] for line in lines[1:]]


def test_reset_offsets_to_earliest(bootstrap: str) -> None:
    """A dry run changes nothing; --execute does, and the group then reads from offset 0."""
    topic, group = "reset-earliest", "reset-earliest-group"
    topic_with(bootstrap, topic, 5)
    ok(run(bootstrap, "consume", topic, "-g", group, "--from-beginning", "-n", "5"))
    assert listed(bootstrap, group) == {(topic, 0): 5}

    dry = reset(bootstrap, group, "--topic", topic, "--to-earliest")
    assert plan(dry) == [[topic, "0", "0"]]
    assert "Dry run: nothing changed" in dry.stderr
    assert listed(bootstrap, group) == {(topic, 0): 5}

    assert plan(reset(bootstrap, group, "--topic", topic, "--to-earliest", "--execute")) == [
        [topic, "0", "0"]
    ]
    assert listed(bootstrap, group) == {(topic, 0): 0}
    again = ok(run(bootstrap, "consume", topic, "-g", group, "-n", "5"))
    assert again.stdout.splitlines() == [f"m{i}" for i in range(5)]


def test_reset_offsets_is_refused_while_the_group_has_members(
    bootstrap: str, consumers: list[Consumer]
) -> None:
    topic, group = "reset-active", "reset-active-group"
    topic_with(bootstrap, topic, 3)
    commit(bootstrap, group, {(topic, 0): 3})
    joined(bootstrap, group, topic, consumers)

    r = reset(bootstrap, group, "--topic", topic, "--to-earliest", "--execute")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        f"Error: assignments can only be reset if the group '{group}' is inactive,"
        " but the current state is STABLE (1 member(s))"
    ]
    assert listed(bootstrap, group) == {(topic, 0): 3}


def test_reset_offsets_scenarios(bootstrap: str) -> None:
    """--to-offset and --shift-by are clamped to the log; --to-datetime and --by-duration find
    the first record at or after the time; T:P picks partitions."""
    topic, group = "reset-scenarios", "reset-scenarios-group"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, 4, partition=0)
    time.sleep(0.05)
    cut = datetime.now(UTC)
    time.sleep(0.05)
    produce(bootstrap, topic, 2, partition=0)
    produce(bootstrap, topic, 3, partition=1)
    commit(bootstrap, group, {(topic, 0): 4, (topic, 1): 1})

    r = reset(bootstrap, group, "--topic", topic, "--to-offset", "5", "--execute")
    assert plan(r) == [[topic, "0", "5"], [topic, "1", "3"]]
    assert f"{topic}-1: offset 5 is outside the log; using the log end offset 3" in r.stderr
    assert listed(bootstrap, group) == {(topic, 0): 5, (topic, 1): 3}

    r = reset(bootstrap, group, "--topic", f"{topic}:0", "--shift-by", "-10", "--execute")
    assert plan(r) == [[topic, "0", "0"]]
    assert listed(bootstrap, group) == {(topic, 0): 0, (topic, 1): 3}

    r = reset(bootstrap, group, "--topic", f"{topic}:0", "--to-datetime", cut.isoformat())
    assert plan(r) == [[topic, "0", "4"]]
    r = reset(bootstrap, group, "--topic", topic, "--by-duration", "PT1H")
    assert plan(r) == [[topic, "0", "0"], [topic, "1", "0"]]
    r = reset(bootstrap, group, "--topic", topic, "--by-duration", "PT0S")
    assert plan(r) == [[topic, "0", "6"], [topic, "1", "3"]]  # nothing that new: the log end

    bad = reset(bootstrap, group, "--topic", f"{topic}:7", "--to-latest")
    assert bad.exit_code == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION: reset-scenarios has no partition 7" in bad.stderr
    assert reset(bootstrap, group, "--topic", topic).exit_code == 2  # no scenario
    assert listed(bootstrap, group) == {(topic, 0): 0, (topic, 1): 3}


def test_reset_offsets_back_up_and_restore_all_topics(bootstrap: str, tmp_path: Path) -> None:
    """--all-topics takes every partition with a committed offset; --to-current --export saves
    them as Kafka's CSV, which --from-file restores after a rewind; the group then resumes
    where it was."""
    orders, audit, group = "reset-all-orders", "reset-all-audit", "reset-all-group"
    topic_with(bootstrap, orders, 6, partitions=2)
    produce(bootstrap, orders, 4, partition=1)
    topic_with(bootstrap, audit, 5)
    saved = {(orders, 0): 4, (orders, 1): 1, (audit, 0): 3}
    commit(bootstrap, group, saved)

    backup = reset(bootstrap, group, "--all-topics", "--to-current", "--export")
    assert backup.exit_code == 0, backup.output
    assert backup.stdout == f"{audit},0,3\n{orders},0,4\n{orders},1,1\n"
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text(backup.stdout)

    rewind = reset(bootstrap, group, "--all-topics", "--to-earliest", "--execute")
    assert plan(rewind) == [[audit, "0", "0"], [orders, "0", "0"], [orders, "1", "0"]]
    assert listed(bootstrap, group) == dict.fromkeys(saved, 0)

    assert plan(reset(bootstrap, group, "--from-file", str(plan_file), "--execute")) == [
        [audit, "0", "3"],
        [orders, "0", "4"],
        [orders, "1", "1"],
    ]
    assert listed(bootstrap, group) == saved
    again = ok(run(bootstrap, "consume", audit, "-g", group, "-n", "2"))
    assert again.stdout.splitlines() == ["m3", "m4"]

    # --to-current on a partition without a committed offset: the log end offset (Kafka's)
    fresh_group = f"{group}-new"
    commit(bootstrap, fresh_group, {(orders, 0): 2})
    r = reset(bootstrap, fresh_group, "--topic", orders, "--to-current", "--execute")
    assert plan(r) == [[orders, "0", "2"], [orders, "1", "4"]]
    assert listed(bootstrap, fresh_group) == {(orders, 0): 2, (orders, 1): 4}


def test_reset_offsets_of_all_groups(broker: BrokerProcess, consumers: list[Consumer]) -> None:
    """--all-groups resets every inactive group, each to the topic's offsets (a group that
    never read the topic too, as Kafka does), and refuses the active one in a line of its own
    (exit status 1); a plan file with group,topic,partition,offset rows works the same way."""
    bootstrap, topic = broker.bootstrap, "reset-groups"
    topic_with(bootstrap, topic, 5)
    create_topic(bootstrap, "reset-groups-other", 1)
    commit(bootstrap, "idle-a", {(topic, 0): 1})
    commit(bootstrap, "idle-b", {("reset-groups-other", 0): 0})
    commit(bootstrap, "busy", {(topic, 0): 2})
    joined(bootstrap, "busy", topic, consumers)

    r = reset(bootstrap, "--all-groups", "--topic", topic, "--to-latest", "--execute")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        "Error: assignments can only be reset if the group 'busy' is inactive, but the"
        " current state is STABLE (1 member(s))"
    ]
    assert [line.split() for line in r.stdout.splitlines()[1:]] == [
        ["idle-a", topic, "0", "5"],
        ["idle-b", topic, "0", "5"],
    ]
    assert listed(bootstrap, "idle-a") == {(topic, 0): 5}
    assert listed(bootstrap, "idle-b") == {("reset-groups-other", 0): 0, (topic, 0): 5}
    assert listed(bootstrap, "busy") == {(topic, 0): 2}

    export = reset(bootstrap, "idle-a", "idle-b", "--all-topics", "--to-earliest", "--export")
    assert export.stdout == (
        f"idle-a,{topic},0,0\nidle-b,{topic},0,0\nidle-b,reset-groups-other,0,0\n"
    )
    consumers[0].close()  # busy leaves: every group is inactive now
    plan_file = broker.data_dir.parent / "groups.csv"
    plan_file.write_text(f"idle-a,{topic},0,3\nidle-b,{topic},0,4\nbusy,{topic},0,9\n")
    r = reset(bootstrap, "--all-groups", "--from-file", str(plan_file), "--execute")
    assert r.exit_code == 0, r.output
    assert [listed(bootstrap, g)[(topic, 0)] for g in ("idle-a", "idle-b", "busy")] == [3, 4, 5]
    assert "Note: reset-groups-0: offset 9 is outside the log" in r.stderr
