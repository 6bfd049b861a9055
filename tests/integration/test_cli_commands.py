"""The client commands against a real ``tiered-mq dev`` broker (in-process CliRunner)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from confluent_kafka import Consumer

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(shared_broker: BrokerProcess) -> str:
    return shared_broker.bootstrap


def run(bootstrap: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input, env={"TIERED_MQ_BOOTSTRAP": bootstrap})


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_topic_lifecycle(bootstrap: str) -> None:
    topic = fresh("life")
    ok(run(bootstrap, "topics", "create", topic, "-p", "3", "-c", "retention.ms=3600000"))
    again = run(bootstrap, "topics", "create", topic)
    assert again.exit_code == 1
    assert "TOPIC_ALREADY_EXISTS" in again.output
    assert topic in ok(run(bootstrap, "topics", "list")).output.splitlines()

    out = ok(run(bootstrap, "topics", "describe", topic)).output.splitlines()
    assert out[0] == f"Topic: {topic}  Partitions: 3  ReplicationFactor: 1"
    assert [line.split()[0] for line in out[2:5]] == ["0", "1", "2"]
    assert any(line.split()[:2] == ["retention.ms", "3600000"] for line in out)

    ok(
        run(
            bootstrap,
            "topics",
            "alter-config",
            topic,
            "--set",
            "segment.bytes=1048576",
            "--delete",
            "retention.ms",
        )
    )
    out = ok(run(bootstrap, "topics", "describe", topic)).output
    assert "segment.bytes  1048576" in out
    assert "retention.ms" not in out  # reverted to the default, no longer listed

    bad = run(bootstrap, "topics", "alter-config", topic, "--set", "cleanup.policy=bogus")
    assert bad.exit_code == 1 and "INVALID_CONFIG" in bad.output

    ok(run(bootstrap, "topics", "delete", topic))
    gone = run(bootstrap, "topics", "describe", topic)
    assert gone.exit_code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in gone.output
    assert run(bootstrap, "topics", "delete", topic).exit_code == 1


def test_produce_consume_round_trip(bootstrap: str, tmp_path: Path) -> None:
    topic = fresh("rt")
    ok(run(bootstrap, "topics", "create", topic, "-p", "2"))
    r = ok(run(bootstrap, "produce", topic, "-K", ":", "-p", "0", input="k1:a\nk2:b\nk3:c\n"))
    assert "Produced 3 records" in r.output
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"line-{i}\n" for i in range(1000)))
    ok(run(bootstrap, "produce", topic, "--file", str(lines), "-z", "zstd", "-p", "1"))

    r = ok(
        run(
            bootstrap,
            "consume",
            topic,
            "-p",
            "0",
            "--from-beginning",
            "-n",
            "3",
            "--print-key",
            "--print-offset",
        )
    )
    assert r.stdout.splitlines() == [
        "Partition:0\tOffset:0\tk1\ta",
        "Partition:0\tOffset:1\tk2\tb",
        "Partition:0\tOffset:2\tk3\tc",
    ]
    r = ok(run(bootstrap, "consume", topic, "-p", "1", "-o", "995", "--idle-timeout", "2"))
    assert r.stdout.splitlines() == [f"line-{i}" for i in range(995, 1000)]
    r = ok(run(bootstrap, "consume", topic, "--from-beginning", "-n", "1003"))
    assert len(r.stdout.splitlines()) == 1003
    assert "Processed a total of 1003 messages" in r.stderr

    desc = ok(run(bootstrap, "topics", "describe", topic)).output.splitlines()
    assert desc[2].split()[4:] == ["0", "3", "3"]
    assert desc[3].split()[4:] == ["0", "1000", "1000"]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_compressed_produce(bootstrap: str, codec: str) -> None:
    topic = fresh(codec)
    ok(run(bootstrap, "topics", "create", topic))
    values = [f"{codec}-{i}-" + "x" * i for i in range(50)]
    ok(run(bootstrap, "produce", topic, "-z", codec, "--acks", "1", input="\n".join(values) + "\n"))
    r = ok(run(bootstrap, "consume", topic, "--from-beginning", "-n", "50"))
    assert r.stdout.splitlines() == values


def test_consume_from_timestamp(bootstrap: str) -> None:
    topic = fresh("ts")
    ok(run(bootstrap, "topics", "create", topic))
    ok(run(bootstrap, "produce", topic, input="old\n"))
    time.sleep(0.05)
    cut = int(time.time() * 1000)
    time.sleep(0.05)
    ok(run(bootstrap, "produce", topic, input="new1\nnew2\n"))
    r = ok(run(bootstrap, "consume", topic, "-t", str(cut), "-n", "2"))
    assert r.stdout.splitlines() == ["new1", "new2"]


def test_group_offsets_and_lag(bootstrap: str) -> None:
    topic, group = fresh("lag"), fresh("grp")
    ok(run(bootstrap, "topics", "create", topic))
    ok(run(bootstrap, "produce", topic, input="".join(f"m{i}\n" for i in range(10))))
    r = ok(run(bootstrap, "consume", topic, "-g", group, "--from-beginning", "-n", "10"))
    assert len(r.stdout.splitlines()) == 10
    ok(run(bootstrap, "produce", topic, input="m10\nm11\nm12\n"))

    listing = ok(run(bootstrap, "groups", "list")).output
    assert [line.split() for line in listing.splitlines()[1:] if line.split()[0] == group] == [
        [group, "Classic", "EMPTY"]
    ]
    out = ok(run(bootstrap, "groups", "describe", group)).output.splitlines()
    assert out[0].startswith(f"Group: {group}  State: EMPTY")
    row = next(line.split() for line in out if line.startswith(topic))
    assert row[:5] == [topic, "0", "10", "13", "3"]
    assert "Total lag: 3" in out

    # the group resumes at its committed offset
    r = ok(run(bootstrap, "consume", topic, "-g", group, "-n", "3"))
    assert r.stdout.splitlines() == ["m10", "m11", "m12"]
    out = ok(run(bootstrap, "groups", "describe", group)).output
    assert "Total lag: 0" in out


def test_groups_list_shows_states(bootstrap: str) -> None:
    """``groups list``: a group with an active member is STABLE, EMPTY once it leaves."""
    topic, group = fresh("st"), fresh("grp-st")
    ok(run(bootstrap, "topics", "create", topic))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})

    def row() -> list[str]:
        listing = ok(run(bootstrap, "groups", "list")).output.splitlines()
        return next(line.split() for line in listing[1:] if line.split()[0] == group)

    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 20
        while not consumer.assignment():
            assert time.monotonic() < deadline
            consumer.poll(0.1)
        assert row() == [group, "Classic", "STABLE"]
    finally:
        consumer.close()
    assert row() == [group, "Classic", "EMPTY"]


def test_consume_prints_timestamps_and_headers(bootstrap: str) -> None:
    """As kafka-console-consumer.sh: ``CreateTime:MS`` (``LogAppendTime:MS`` on a topic with
    message.timestamp.type=LogAppendTime), headers ``k1:v1,k2:v2`` or ``NO_HEADERS``."""
    topic, appended = fresh("hdr"), fresh("hdr-append")
    ok(run(bootstrap, "topics", "create", topic))
    ok(run(bootstrap, "topics", "create", appended, "-c", "message.timestamp.type=LogAppendTime"))
    before = int(time.time() * 1000)
    for name in (topic, appended):
        ok(run(bootstrap, "produce", name, "-H", "trace=t-1", "-H", "src=cli", input="a\n"))
        ok(run(bootstrap, "produce", name, "-K", ":", input="k:b\n"))
    after = int(time.time() * 1000)

    flags = ("--print-timestamp", "--print-offset", "--print-headers", "--print-key")
    for name, kind in ((topic, "CreateTime"), (appended, "LogAppendTime")):
        r = ok(run(bootstrap, "consume", name, "--from-beginning", "-n", "2", *flags))
        lines = [line.split("\t") for line in r.stdout.splitlines()]
        assert [line[1:] for line in lines] == [
            ["Partition:0", "Offset:0", "trace:t-1,src:cli", "null", "a"],
            ["Partition:0", "Offset:1", "NO_HEADERS", "k", "b"],
        ]
        for line in lines:
            type_name, _, ms = line[0].partition(":")
            assert type_name == kind and before <= int(ms) <= after

    r = ok(run(bootstrap, "consume", topic, "--from-beginning", "-n", "2", "--print-headers"))
    assert r.stdout.splitlines() == ["trace:t-1,src:cli\ta", "NO_HEADERS\tb"]


def test_consume_into_a_closed_pipe_ends_quietly(bootstrap: str) -> None:
    """``tiered-mq consume ... | head -n 3``: once head exits, the next write finds stdout
    closed; the command ends with status 0, its count and no traceback, and commits what it
    wrote before (as on Ctrl-C)."""
    topic, group = fresh("pipe"), fresh("pipe-group")
    ok(run(bootstrap, "topics", "create", topic))
    ok(run(bootstrap, "produce", topic, input="".join(f"{i:0100d}\n" for i in range(5000))))

    command = [sys.executable, "-m", "tiered_mq", "consume", topic, "-g", group]
    env = {**os.environ, "TIERED_MQ_BOOTSTRAP": bootstrap}
    consume = subprocess.Popen(
        [*command, "--from-beginning"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert consume.stdout is not None and consume.stderr is not None
    head = subprocess.run(["head", "-n", "3"], stdin=consume.stdout, capture_output=True)
    consume.stdout.close()
    assert consume.wait(timeout=60) == 0
    stderr = consume.stderr.read().decode()
    assert head.stdout.decode().splitlines() == [f"{i:0100d}" for i in range(3)]
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    processed = int(stderr.split("Processed a total of ")[1].split()[0])
    assert 3 <= processed < 5000

    out = ok(run(bootstrap, "groups", "describe", group)).output
    assert next(line.split() for line in out.splitlines() if line.startswith(topic))[2] == str(
        processed
    )


def test_consume_into_a_closed_pipe_ends_while_idle(bootstrap: str) -> None:
    """The README's ``tiered-mq consume orders --from-beginning ... | head -n 3`` on a topic
    whose records all fit in the pipe: every write succeeds before head exits, and no record
    comes after. The command still ends (status 0, no traceback) once head has gone, instead
    of polling forever for a record to write."""
    topic = fresh("idle-pipe")
    ok(run(bootstrap, "topics", "create", topic, "--partitions", "3"))
    ok(run(bootstrap, "produce", topic, input="".join(f"{i}\n" for i in range(20))))

    env = {**os.environ, "TIERED_MQ_BOOTSTRAP": bootstrap}
    command = [sys.executable, "-m", "tiered_mq", "consume", topic, "--from-beginning"]
    consume = subprocess.Popen(
        [*command, "--print-timestamp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert consume.stdout is not None and consume.stderr is not None
    head = subprocess.run(["head", "-n", "3"], stdin=consume.stdout, capture_output=True)
    consume.stdout.close()
    try:
        status = consume.wait(timeout=20)
    finally:
        consume.kill()
    stderr = consume.stderr.read().decode()
    assert status == 0, stderr
    assert len(head.stdout.decode().splitlines()) == 3
    assert "Traceback" not in stderr and "Processed a total of 20 messages" in stderr, stderr


def test_ctrl_c_with_the_broker_gone_ends_quietly(tmp_path: Path) -> None:
    """Ctrl-C on ``tiered-mq consume -g G`` while the broker is unreachable (librdkafka logs
    every failed reconnect through the Python logger): status 0 and the summary line, no
    traceback (it ended with ``SystemError: ... consume ... returned NULL`` before). The
    broker goes away once the run has started (one unreachable from the start is an error at
    once: test_cli5_console.py)."""
    broker = BrokerProcess(tmp_path / "gone").start()
    bootstrap = broker.bootstrap
    try:
        ok(run(bootstrap, "topics", "create", "t"))
    finally:
        broker.stop()
    command = [sys.executable, "-m", "tiered_mq", "consume", "t", "-g", "g"]
    env = {**os.environ, "TIERED_MQ_BOOTSTRAP": bootstrap}
    for wait in (2.0, 3.5):
        broker.start()
        consume = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        time.sleep(3.0)  # start-up and the topic's metadata: the run has started
        broker.stop()
        time.sleep(wait)
        consume.send_signal(signal.SIGINT)
        _, err = consume.communicate(timeout=30)
        stderr = err.decode()
        assert consume.returncode == 0, stderr
        assert "Traceback" not in stderr, stderr
        assert stderr.strip().splitlines()[-1] == "Processed a total of 0 messages"
