"""CLI hunt 6, unreachable brokers (the commands run as a user runs them, real librdkafka):

- ``consume`` and ``produce`` against a listener that accepts connections and never answers
  (a TLS listener spoken to in plaintext looks the same) fail with one message,
  ``_TRANSPORT: metadata for T: no broker could be reached: no answer within Ns``: ``consume``
  printed, from run to run, either that (without the detail) or librdkafka's ``Failed to get
  metadata: Local: Broker transport failure`` (its 10 s look-up bound and librdkafka's 10 s
  ApiVersions timeout race), and ``produce --max-block-ms 2000`` always the latter.
- ``configs describe/alter --broker N`` and ``--broker-default`` talk to the broker over the
  CLI's own connection, not librdkafka's: their unreachable hint said "-v shows librdkafka's
  log", which shows nothing there. The hint now names the address tried and stops there; the
  commands librdkafka serves keep it.
"""

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

CLI = [sys.executable, "-m", "tiered_mq"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}
QUESTION = "is it running, and does its listener need TLS or SASL (-X security.protocol=...)?"


def run(*args: str, input: bytes = b"") -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds) of ``tiered-mq ARGS``."""
    started = time.monotonic()
    done = subprocess.run([*CLI, *args], input=input, capture_output=True, timeout=90, env=ENV)
    return done.returncode, done.stdout.decode(), done.stderr.decode(), time.monotonic() - started


@pytest.fixture(scope="module")
def silent() -> Iterator[str]:
    """The address of a listener that accepts every connection and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_consume_from_a_silent_listener_says_no_broker_answered(silent: str) -> None:
    status, stdout, stderr, elapsed = run("consume", "t", "-b", silent)
    assert status == 1, stderr
    assert stderr.splitlines() == [
        "Error: _TRANSPORT: metadata for t: no broker could be reached: no answer within 10s",
        f"hint: could not talk to the broker at {silent}: {QUESTION} -v shows librdkafka's log",
    ]
    assert stdout == ""
    assert elapsed < 20, elapsed  # the 10 s look-up bound, not more


def test_produce_from_a_silent_listener_within_max_block_says_the_same(silent: str) -> None:
    status, stdout, stderr, elapsed = run(
        "produce", "t", "-b", silent, "--max-block-ms", "2000", input=b"a\n"
    )
    assert status == 1, stderr
    assert stderr.splitlines()[0] == (
        "Error: _TRANSPORT: metadata for t: no broker could be reached: no answer within 2s"
    )
    assert stdout == ""
    assert elapsed < 8, elapsed


@pytest.mark.parametrize(
    "args",
    [
        ["describe", "--broker", "0"],
        ["describe", "--broker-default"],
        ["alter", "--broker", "0", "--set", "log.cleaner.threads=2"],
        ["alter", "--broker-default", "--set", "log.cleaner.threads=2"],
        ["describe", "--topic", "t", "--synonyms"],
    ],
)
def test_the_clis_own_connection_gets_no_librdkafka_hint(args: list[str], silent: str) -> None:
    refused = f"127.0.0.1:{free_port()}"
    status, _, stderr, _ = run("configs", *args, "-b", refused, "-v")
    assert status == 1, stderr
    assert stderr.splitlines() == [  # -v: and still no librdkafka line, as none was logged
        f"Error: _TRANSPORT: could not connect to {refused}: [Errno 111] Connection refused",
        f"hint: could not talk to the broker at {refused}: {QUESTION}",
    ]

    status, _, stderr, _ = run("configs", *args, "-b", silent, "--timeout", "1")
    assert status == 1, stderr
    assert stderr.splitlines() == [
        f"Error: _TIMED_OUT: no answer from {silent} in time",
        f"hint: no answer from the broker at {silent}: {QUESTION}",
    ]


def test_a_config_command_librdkafka_serves_keeps_the_log_hint() -> None:
    refused = f"127.0.0.1:{free_port()}"
    status, _, stderr, _ = run("configs", "describe", "--topic", "t", "-b", refused)
    assert status == 1, stderr
    assert stderr.splitlines()[-1] == (
        f"hint: could not talk to the broker at {refused}: {QUESTION} -v shows librdkafka's log"
    )
