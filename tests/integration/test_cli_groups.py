"""``tiered-mq groups`` against a real ``tiered-mq dev`` broker, with groups made by
confluent-kafka consumers: what ``describe`` shows of a live group, ``delete`` and
``reset-offsets`` as ``kafka-consumer-groups.sh`` does them."""

from __future__ import annotations

import pytest
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
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 3)
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
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, 3)
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
