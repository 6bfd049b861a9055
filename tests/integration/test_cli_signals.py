"""``tiered-mq`` as a process: Ctrl-C and a closed stdout end every command quietly."""

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


def test_ctrl_c_while_consume_looks_up_partitions_ends_within_a_second() -> None:
    """``consume`` without a group against a dead broker asks for the topic's partitions for
    10 s; a Ctrl-C 2 s in ends it within about a second, as Ctrl-C while polling does (status
    0, the count, no traceback). It waited out the 10 s before, then failed (status 1)."""
    command = [*CLI, "consume", "t", "-b", f"127.0.0.1:{free_port()}"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, env=ENV) as consume:
        time.sleep(2.0)
        consume.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = consume.communicate(timeout=30)
    assert time.monotonic() - started < 1.5
    stderr = err.decode()
    assert consume.returncode == 0, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1] == (
        "Processed a total of 0 messages"
    )
