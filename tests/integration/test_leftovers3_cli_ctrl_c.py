"""Ctrl-C (a real SIGINT to the ``tiered-mq`` process) while an admin command waits for a
broker that does not answer: exit status 130 at once, as a Ctrl-C during start-up gives, with
neither click's "Aborted!" nor a traceback (exit status 1 and "Aborted!" before).

The broker is a listener that accepts connections and never answers, and librdkafka is told to
wait 60 s for its ApiVersions answer: a port nobody listens on no longer keeps the command
waiting (it fails at once with ``_TRANSPORT``: test_cli4_unreachable_admin.py), nor would
librdkafka's default 10 s ApiVersions time-out leave a wide margin."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """HOST:PORT of a listener that accepts connections, reads nothing and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in accepted:
        conn.close()


@pytest.mark.parametrize(
    "args",
    [
        ("topics", "list"),
        ("topics", "describe", "t"),
        ("groups", "list"),
        ("groups", "describe", "g"),
        ("users", "list"),
        ("configs", "describe", "--topic", "t"),
    ],
)
def test_ctrl_c_while_waiting_for_a_silent_broker_exits_130(
    args: tuple[str, ...], silent_listener: str
) -> None:
    command = [*CLI, *args, "-b", silent_listener, "-X", "api.version.request.timeout.ms=60000"]
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
