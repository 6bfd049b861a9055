"""``tiered-mq`` as a process: Ctrl-C and a closed stdout end every command quietly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.integration.broker_process import BrokerProcess, free_port
from tiered_mq.client import Admin

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def test_ctrl_c_while_consume_looks_up_partitions_ends_within_a_second() -> None:
    """``consume`` without a group against a listener that never answers asks for the topic's
    partitions for 10 s (a port nobody listens on fails at once: test_cli5_console.py); a
    Ctrl-C 5 s in (imports take seconds on a loaded machine) ends it at once, as Ctrl-C while
    polling does (status 0, the count, no traceback). It waited out the 10 s before, then
    failed (status 1)."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        command = [*CLI, "consume", "t", "-b", f"127.0.0.1:{silent.getsockname()[1]}"]
        with subprocess.Popen(command, stderr=subprocess.PIPE, env=ENV) as consume:
            time.sleep(5.0)
            consume.send_signal(signal.SIGINT)
            started = time.monotonic()
            _, err = consume.communicate(timeout=30)
    assert time.monotonic() - started < 3.0  # not the rest of the 10 s
    stderr = err.decode()
    assert consume.returncode == 0, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1] == (
        "Processed a total of 0 messages"
    )


def run_into_a_closed_pipe(*args: str, bootstrap: str | None = None) -> tuple[int, str]:
    """Runs ``tiered-mq ARGS`` with stdout a pipe whose reader has already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = ENV if bootstrap is None else {**ENV, "TIERED_MQ_BOOTSTRAP": bootstrap}
    try:
        done = subprocess.run(
            [*CLI, *args], stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60
        )
    finally:
        os.close(write_end)
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize(
    "args",
    [
        ("topics", "list"),
        ("topics", "describe", "closed-pipe"),
        ("groups", "list"),
        ("--help",),
        ("--version",),
        ("topics", "--help"),
    ],
)
def test_every_command_into_a_closed_pipe_ends_quietly(
    shared_broker: BrokerProcess, args: tuple[str, ...]
) -> None:
    """``tiered-mq topics list | grep -q x`` under ``set -o pipefail``: once the reader has
    gone, a command exits 0 with nothing on stderr, as ``consume`` does (click's handling
    exited 1 without a word)."""
    admin = Admin(bootstrap_servers=shared_broker.bootstrap)
    if "closed-pipe" not in admin.list_topics():
        admin.create_topic("closed-pipe")
    code, stderr = run_into_a_closed_pipe(*args, bootstrap=shared_broker.bootstrap)
    assert (code, stderr) == (0, "")


def test_a_failing_command_into_a_closed_pipe_still_fails() -> None:
    """The reader having gone hides no error: an unreachable broker is still status 1 with
    its message."""
    code, stderr = run_into_a_closed_pipe(
        "topics", "list", "--timeout", "1", bootstrap=f"127.0.0.1:{free_port()}"
    )
    assert code == 1 and "Error: _TRANSPORT" in stderr, stderr
