"""CLI hunt 5 against a real broker (real librdkafka, the command run as a user runs it):

- ``produce`` and ``consume`` fail as the admin commands do when no broker can be reached
  (``_TRANSPORT ... no broker could be reached: <librdkafka's connection error>``, the hint,
  exit status 1) within seconds: they waited out a 10 s look-up, and ``consume`` first warned
  that it had "lost" a connection it never had. A dead address before a live one is no error.
- ``produce`` gives up on a record the broker keeps refusing (NOT_ENOUGH_REPLICAS) after 3
  retries, as kafka-console-producer's ``--message-send-max-retries`` does: librdkafka's own
  retried it until the 30 s acknowledgement wait ended in ``_TIMED_OUT``.
- ``consume --print-offset`` prints ``Partition:P<TAB>Offset:O`` as kafka-console-consumer
  prints ``print.partition``/``print.offset`` (it printed ``P:O``).
- ``topics describe``'s column is OFFSETS (latest - earliest), not MESSAGES: a transaction's
  commit marker takes an offset too.
- ``groups delete --all-groups``, as kafka-consumer-groups.sh ``--delete --all-groups``.
- ``produce -p N`` for a partition the topic does not have fails before reading the input,
  worded as ``consume -p N``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.integration.absent_replica import DEAF, deaf_broker  # noqa: F401  (the fixture)
from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (deaf_broker's)
from tiered_mq.client import Producer, ProducerConfig
from tiered_mq.client.admin import Admin
from tiered_mq.client.config import DeliverySemantics

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def run(*args: str, input: bytes = b"", timeout: float = 60) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds) of ``tiered-mq ARGS``."""
    started = time.monotonic()
    done = subprocess.run([*CLI, *args], input=input, capture_output=True, timeout=timeout, env=ENV)
    elapsed = time.monotonic() - started
    return done.returncode, done.stdout.decode(), done.stderr.decode(), elapsed


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize(
    "command",
    [["produce", "t"], ["consume", "t"], ["consume", "t", "-g", "g"], ["consume", "t", "-p", "0"]],
)
def test_no_broker_reachable_fails_as_the_admin_commands_do(command: list[str]) -> None:
    address = f"127.0.0.1:{free_port()}"
    status, stdout, stderr, elapsed = run(*command, "-b", address, input=b"line\n")
    assert status == 1, stderr
    error, hint = stderr.splitlines()  # no "lost the connection" warning before it
    assert error.startswith("Error: _TRANSPORT: metadata for t: no broker could be reached: ")
    assert "Connection refused" in error  # librdkafka's last connection error
    assert hint.startswith(f"hint: could not talk to the broker at {address}: is it running")
    assert elapsed < 6, elapsed  # start-up and a round or two: not the 10 s look-up
    assert stdout == ""


def test_a_dead_address_before_a_live_one_is_no_error(shared_broker: BrokerProcess) -> None:
    topic = fresh("dead-first")
    Admin(bootstrap_servers=shared_broker.bootstrap).create_topic(topic, 1, 1)
    bootstrap = f"127.0.0.1:{free_port()},{shared_broker.bootstrap}"
    status, _, stderr, _ = run("produce", topic, "-b", bootstrap, input=b"a\nb\n")
    assert status == 0, stderr
    status, stdout, stderr, _ = run(
        "consume", topic, "-b", bootstrap, "--from-beginning", "-n", "2"
    )
    assert status == 0, stderr
    assert stdout.splitlines() == ["a", "b"]


@pytest.fixture(scope="module")
def deaf_topic() -> str:
    """Replicas [0, 1] with broker 1 down and min.insync.replicas 2 (absent_replica.py, on
    deaf_broker): the broker answers every produce (acks=all) with NOT_ENOUGH_REPLICAS, a
    retriable error."""
    return DEAF


def test_a_refused_record_fails_after_kafkas_three_retries(
    deaf_broker: BrokerProcess,  # noqa: F811
    deaf_topic: str,
) -> None:
    status, _, stderr, elapsed = run(
        "produce", deaf_topic, "-b", deaf_broker.bootstrap, input=b"r\n"
    )
    assert status == 1, stderr
    assert f"Produced 0 of 1 records to {deaf_topic} (1 not delivered)" in stderr
    assert "Error: NOT_ENOUGH_REPLICAS: 1 record(s) not delivered" in stderr
    assert elapsed < 15, elapsed  # not the 30 s acknowledgement wait


def test_retries_are_set_by_the_option_or_by_x_retries(
    deaf_broker: BrokerProcess,  # noqa: F811
    deaf_topic: str,
) -> None:
    """With 1 s between two attempts, the run lasts about one second per retry: none with
    ``--message-send-max-retries 0``, 1 with ``-X retries=1``, 3 by default."""
    args = ["produce", deaf_topic, "-b", deaf_broker.bootstrap]
    args += ["-X", "retry.backoff.ms=1000", "-X", "retry.backoff.max.ms=1000"]
    seconds = {}
    for name, extra in (
        ("none", ["--message-send-max-retries", "0"]),
        ("one", ["-X", "retries=1"]),
        ("default", []),
    ):
        status, _, stderr, elapsed = run(*args, *extra, input=b"r\n")
        assert status == 1 and "Error: NOT_ENOUGH_REPLICAS" in stderr, stderr
        seconds[name] = elapsed
    assert 0.6 < seconds["one"] - seconds["none"] < 1.8, seconds
    assert 2.2 < seconds["default"] - seconds["none"] < 5, seconds


def test_print_offset_prints_kafkas_partition_and_offset(shared_broker: BrokerProcess) -> None:
    topic = fresh("print-offset")
    Admin(bootstrap_servers=shared_broker.bootstrap).create_topic(topic, 2, 1)
    server = ["-b", shared_broker.bootstrap]
    assert run("produce", topic, *server, "-p", "1", "-K", ":", input=b"k:a\nk:b\n")[0] == 0
    read = ["consume", topic, *server, "--from-beginning", "-n", "2"]
    status, stdout, stderr, _ = run(*read, "--print-offset", "--print-key")
    assert status == 0, stderr
    assert stdout.splitlines() == ["Partition:1\tOffset:0\tk\ta", "Partition:1\tOffset:1\tk\tb"]
    props = ["-X", "print.partition=true", "-X", "print.offset=true", "-X", "print.key=true"]
    assert run(*read, *props)[1] == stdout  # kafka-console-consumer's properties: the same


def test_describe_counts_offsets_not_messages(shared_broker: BrokerProcess) -> None:
    topic = fresh("txn")
    Admin(bootstrap_servers=shared_broker.bootstrap).create_topic(topic, 1, 1)
    config = ProducerConfig(
        bootstrap_servers=shared_broker.bootstrap,
        semantics=DeliverySemantics.EXACTLY_ONCE,
        transactional_id=fresh("cli5"),
    )
    producer = Producer(config)
    with producer.transaction():
        producer.send(topic, b"one")
    status, stdout, stderr, _ = run("topics", "describe", topic, "-b", shared_broker.bootstrap)
    assert status == 0, stderr
    header, row = stdout.splitlines()[1:3]
    assert header.split() == [
        "PARTITION",
        "LEADER",
        "REPLICAS",
        "ISR",
        "EARLIEST",
        "LATEST",
        "OFFSETS",
    ]
    assert row.split()[4:] == ["0", "2", "2"]  # the record and the commit marker
    read = ["consume", topic, "-b", shared_broker.bootstrap, "--from-beginning"]
    assert run(*read, "--idle-timeout", "2")[1] == "one\n"  # one message


def test_groups_delete_all_groups(shared_broker: BrokerProcess) -> None:
    topic, groups = fresh("del-all"), [fresh("g"), fresh("g")]
    server = ["-b", shared_broker.bootstrap]
    Admin(bootstrap_servers=shared_broker.bootstrap).create_topic(topic, 1, 1)
    assert run("produce", topic, *server, input=b"x\n")[0] == 0
    for group in groups:
        status, _, stderr, _ = run(
            "consume", topic, *server, "-g", group, "--from-beginning", "-n", "1"
        )
        assert status == 0, stderr
    status, stdout, stderr, _ = run("groups", "delete", "--all-groups", *server)
    assert status == 0, stderr
    for group in groups:
        assert f"Deleted consumer group '{group}'." in stdout.splitlines()
    assert not any(
        line.split()[0] in groups for line in run("groups", "list", *server)[1].splitlines()
    )


def test_produce_to_a_partition_the_topic_lacks(shared_broker: BrokerProcess) -> None:
    topic = fresh("two")
    Admin(bootstrap_servers=shared_broker.bootstrap).create_topic(topic, 2, 1)
    status, _, stderr, _ = run(
        "produce", topic, "-b", shared_broker.bootstrap, "-p", "5", input=b"a\n"
    )
    assert status == 1
    assert (
        stderr
        == f"Error: UNKNOWN_TOPIC_OR_PARTITION: {topic} has no partition 5 (partitions: 0-1)\n"
    )
