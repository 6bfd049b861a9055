"""Ctrl-C (a real SIGINT to the ``tiered-mq`` process) while an admin command waits for a
broker that is not there: exit status 130 at once, as a Ctrl-C during start-up gives, with
neither click's "Aborted!" nor a traceback (exit status 1 and "Aborted!" before)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.broker_process import free_port

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


@pytest.mark.parametrize(
    "args",
    [
        ("topics", "list"),
        ("topics", "describe", "t"),
        ("groups", "list"),
        ("users", "list"),
        ("configs", "describe", "--topic", "t"),
    ],
)
def test_ctrl_c_while_waiting_for_a_dead_broker_exits_130(args: tuple[str, ...]) -> None:
    command = [*CLI, *args, "-b", f"127.0.0.1:{free_port()}"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    ) as process:
        # started (imports take seconds on a loaded machine: a SIGINT before the CLI's handler
        # is a KeyboardInterrupt traceback) and waiting for the broker (15 s --timeout)
        time.sleep(6.0)
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, err = process.communicate(timeout=30)
    stderr = err.decode()
    assert time.monotonic() - started < 5.0  # at once, not the rest of the 15 s
    assert process.returncode == 130, stderr
    assert "Aborted!" not in stderr and "Traceback" not in stderr, stderr
    assert out == b""
