"""``tiered-mq produce`` bounds its look-up of the topic by ``--max-block-ms``, as Kafka's
producer bounds its metadata wait by ``max.block.ms`` (it waited a fixed 10 s): a listener that
accepts the connection and never answers (to librdkafka a broker not reached: ``_TRANSPORT``)
fails the run after a shorter ``--max-block-ms``, and no broker reachable at all still fails
within 10 s with the 60 s default."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from tests.integration.broker_process import free_port

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "tiered_mq", "produce", "t"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """HOST:PORT of a listener that accepts connections, reads and never answers."""
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


def run(*args: str) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run([*CLI, *args], input=b"hi\n", capture_output=True, timeout=90, env=ENV)
    return done.returncode, done.stderr.decode(), time.monotonic() - started


def test_a_short_max_block_ms_bounds_the_look_up(silent_listener: str) -> None:
    code, stderr, elapsed = run("-b", silent_listener, "--max-block-ms", "3000")
    assert code == 1, stderr
    assert 2.5 < elapsed < 8, elapsed  # the old fixed 10 s wait ended at 10 s
    assert "Error: _TRANSPORT: metadata for t" in stderr, stderr
    assert "Produced" not in stderr  # nothing was read


def test_no_broker_at_all_still_fails_within_10_s() -> None:
    code, stderr, elapsed = run("-b", f"127.0.0.1:{free_port()}")  # --max-block-ms 60000
    assert code == 1, stderr
    assert elapsed < 20, elapsed
    assert "Error: _TRANSPORT: metadata for t" in stderr, stderr
    assert "hint: could not talk to the broker" in stderr
