"""``consume`` on SIGTERM ends as kafka-console-consumer does (its shutdown hook wakes the
consumer, the consumer closes, ``Processed a total of N messages`` goes to stderr, and the JVM
exits with status 143): it died from the signal (status -15 to a parent, 143 in a shell)
without the count, and without committing the offsets of the records it had printed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from typing import IO

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_groups_offset_delete import listed
from tiered_mq.client import Producer, ProducerConfig
from tiered_mq.client.admin import Admin

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def read_lines(stream: IO[bytes] | None, n: int) -> list[bytes]:
    """``n`` lines of a process's stdout pipe (fewer, ending in ``b""``, if it ends first)."""
    assert stream is not None
    return [stream.readline() for _ in range(n)]


def test_sigterm_prints_the_count_commits_and_exits_143(shared_broker: BrokerProcess) -> None:
    bootstrap = shared_broker.bootstrap
    topic, group = f"sigterm-{uuid.uuid4().hex[:8]}", f"sigterm-group-{uuid.uuid4().hex[:8]}"
    Admin(bootstrap_servers=bootstrap).create_topic(topic, 1, 1)
    with Producer(ProducerConfig(bootstrap_servers=bootstrap)) as producer:
        for i in range(5):
            producer.send(topic, f"m{i}".encode(), partition=0)
        producer.flush(10)
    command = [*CLI, "consume", topic, "-b", bootstrap, "-g", group, "--from-beginning"]
    command += ["--idle-timeout", "60"]  # a run that prints nothing ends by itself
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    ) as consume:
        printed = read_lines(consume.stdout, 5)
        consume.send_signal(signal.SIGTERM)
        rest, err = consume.communicate(timeout=30)
    stderr = err.decode()
    assert printed == [f"m{i}\n".encode() for i in range(5)] and rest == b""
    assert consume.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == "Processed a total of 5 messages"
    assert listed(bootstrap, group) == {(topic, 0): 5}  # committed as on Ctrl-C


def test_sigterm_during_the_look_up_ends_it_at_once() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        command = [*CLI, "consume", "t", "-b", f"127.0.0.1:{silent.getsockname()[1]}"]
        with subprocess.Popen(command, stderr=subprocess.PIPE, env=ENV) as consume:
            time.sleep(4.0)  # imports done, asking for the partitions (10 s at most)
            consume.send_signal(signal.SIGTERM)
            started = time.monotonic()
            _, err = consume.communicate(timeout=30)
    assert time.monotonic() - started < 3.0  # not the rest of the 10 s
    stderr = err.decode()
    assert consume.returncode == 143, stderr
    assert stderr.splitlines() == ["Processed a total of 0 messages"]
