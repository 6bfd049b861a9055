"""``topics describe`` and ``groups describe`` of several names, or of all (kafka-topics.sh
--describe without --topic, kafka-consumer-groups.sh --describe --all-groups); they took
exactly one NAME/GROUP."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_describe_several_and_all(shared_broker: BrokerProcess) -> None:
    def run(*args: str, input: str | None = None) -> Result:
        env = {"TIERED_MQ_BOOTSTRAP": shared_broker.bootstrap}
        return CliRunner().invoke(main, list(args), input=input, env=env)

    tag = uuid.uuid4().hex[:8]
    topics, groups = [f"many-{tag}-{i}" for i in range(2)], [f"g-{tag}-{i}" for i in range(2)]
    for topic, group in zip(topics, groups, strict=True):
        assert run("topics", "create", topic).exit_code == 0
        assert run("produce", topic, input="a\nb\n").exit_code == 0
        consume = ["consume", topic, "-g", group, "-p", "0", "-o", "earliest", "-n", "2"]
        assert run(*consume).exit_code == 0

    def headings(result: Result, prefix: str) -> list[str]:
        return [line.split()[1] for line in result.stdout.splitlines() if line.startswith(prefix)]

    both = run("topics", "describe", *topics)
    assert both.exit_code == 0, both.output
    assert headings(both, "Topic:") == topics
    every = run("topics", "describe")
    assert every.exit_code == 0 and set(topics) <= set(headings(every, "Topic:"))

    missing = f"g-{tag}-missing"
    some = run("groups", "describe", groups[0], missing, groups[1])
    assert some.exit_code == 1
    assert headings(some, "Group:") == groups
    assert f"GROUP_ID_NOT_FOUND: consumer group {missing} does not exist" in some.stderr
    every = run("groups", "describe", "--all-groups")
    assert every.exit_code == 0, every.output
    assert set(groups) <= set(headings(every, "Group:"))
