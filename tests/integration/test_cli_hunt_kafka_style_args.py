"""The command lines of kafka-console-producer.sh / kafka-console-consumer.sh work as typed:
``--topic T`` (the CLI only took TOPIC as an argument: "No such option: --topic") and the
consumer's ``--timeout-ms``."""

from __future__ import annotations

import time
import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_kafka_console_command_lines(shared_broker: BrokerProcess) -> None:
    def run(*args: str, input: str | None = None) -> Result:
        result = CliRunner().invoke(main, list(args), input=input)
        assert result.exit_code == 0, result.output
        return result

    server, topic = ["--bootstrap-server", shared_broker.bootstrap], f"ks-{uuid.uuid4().hex[:8]}"
    run("topics", "create", topic, *server)
    produce = ["produce", *server, "--topic", topic, "--property", "parse.key=true"]
    run(*produce, "--property", "key.separator=:", input="k:v\n")
    started = time.monotonic()
    consume = ["consume", *server, "--topic", topic, "--from-beginning", "--timeout-ms", "1500"]
    r = run(*consume, "--property", "print.key=true")
    assert r.stdout == "k\tv\n"
    assert "Processed a total of 1 messages" in r.stderr
    assert time.monotonic() - started < 10  # ended by --timeout-ms, not by a record count

    both = CliRunner().invoke(main, ["consume", "a", "--topic", "b", *server])
    assert both.exit_code == 2 and "two topics given" in both.output
    neither = CliRunner().invoke(main, ["consume", *server])
    assert neither.exit_code == 2 and "Missing argument 'TOPIC'" in neither.output


def test_kafka_admin_command_lines(shared_broker: BrokerProcess) -> None:
    """kafka-topics.sh's ``--topic`` and kafka-consumer-groups.sh's ``--group``."""

    def run(*args: str) -> Result:
        result = CliRunner().invoke(main, [*args, "--bootstrap-server", shared_broker.bootstrap])
        assert result.exit_code == 0, result.output
        return result

    topic, group = f"ka-{uuid.uuid4().hex[:8]}", f"ka-{uuid.uuid4().hex[:8]}"
    run("topics", "create", "--topic", topic, "--partitions", "2")
    run("topics", "alter", "--topic", topic, "--partitions", "3")
    assert run("topics", "describe", "--topic", topic).stdout.startswith(
        f"Topic: {topic}  Partitions: 3"
    )
    reset = ["groups", "reset-offsets", "--group", group, "--topic", topic, "--to-earliest"]
    assert run(*reset, "--execute").stdout.splitlines()[1].split() == [group, topic, "0", "0"]
    assert run("groups", "describe", "--group", group).stdout.startswith(f"Group: {group} ")
    deleted = run("groups", "delete", "--group", group).stdout
    assert deleted == f"Deleted consumer group '{group}'.\n"
    run("topics", "delete", "--topic", topic)
