"""``tiered-mq produce`` looks for the broker before it reads its input, as ``consume`` does: a
broker that cannot be reached is ``Error: _TRANSPORT`` with the unreachable hint and exit
status 1 within seconds (a one-line input waited out the 30 s acknowledgement wait, then
failed with ``_TIMED_OUT``), and a Ctrl-C meanwhile exits 130 at once (nothing was read)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq", "produce", "t", "-v"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def test_produce_to_an_unreachable_broker_fails_fast() -> None:
    started = time.monotonic()
    args = [*CLI, "-b", "no-such-host.invalid:9092"]
    done = subprocess.run(args, input=b"hi\n", capture_output=True, timeout=60, env=ENV)
    elapsed = time.monotonic() - started
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert elapsed < 20, elapsed
    assert "Error: _TRANSPORT: metadata for t: " in stderr, stderr
    assert "hint: could not talk to the broker at no-such-host.invalid:9092" in stderr
    assert "Produced" not in stderr  # nothing was read
    # -v: librdkafka's line, once (it repeats on every reconnect, each with its own timing)
    resolve_failures = [
        line
        for line in stderr.splitlines()
        if "Failed to resolve" in line and not line.startswith("Error:")  # the error names it
    ]
    assert len(resolve_failures) == 1, stderr


def test_ctrl_c_while_looking_for_the_broker_exits_130() -> None:
    """A listener that takes the connection and never answers: the run looks for the broker
    (a port nobody listens on fails within a second now: test_cli5_reach.py)."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        args = [*CLI, "-b", f"127.0.0.1:{silent.getsockname()[1]}"]
        with subprocess.Popen(
            args, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
        ) as process:
            assert process.stdin is not None and process.stderr is not None
            process.stdin.write(b"a\n")
            process.stdin.close()
            time.sleep(2.5)  # start-up, then the look-up: it is waiting for an answer
            assert process.poll() is None
            process.send_signal(signal.SIGINT)
            started = time.monotonic()
            rest = process.stderr.read().decode()
            assert process.wait(timeout=30) == 130, rest
    assert time.monotonic() - started < 3
    assert "Traceback" not in rest and "Aborted" not in rest, rest
