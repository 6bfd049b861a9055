"""librdkafka's log lines reach stderr only with ``-v``: a broker that cannot be reached is the
command's own error and hint, two lines (librdkafka's ``FAIL ... Connection refused`` line came
first, through Python's last-resort handler). Real librdkafka, a port nobody listens on; the
command runs in its own process, as a user runs it (pytest's log capture would take the lines
the last-resort handler printed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.integration.broker_process import free_port
from tiered_mq.cli import main
from tiered_mq.client.config import LIBRDKAFKA_LOG


def _list_topics(*extra: str) -> list[str]:
    args = ["topics", "list", "-b", f"127.0.0.1:{free_port()}", "--timeout", "1", *extra]
    env = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}
    done = subprocess.run(
        [sys.executable, "-m", "tiered_mq", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1, done.stderr
    return done.stderr.splitlines()


def test_an_unreachable_broker_is_one_error_and_its_hint() -> None:
    lines = _list_topics()
    assert len(lines) == 2, lines
    assert lines[0].startswith("Error: _TRANSPORT: list topics: ")
    assert lines[1].startswith("hint: could not talk to the broker at 127.0.0.1:")
    assert lines[1].endswith("? -v shows librdkafka's log")


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
def test_verbose_shows_librdkafkas_lines(flag: str) -> None:
    lines = _list_topics(flag)
    assert "Connect to" in lines[0] and "Connection refused" in lines[0], lines
    assert lines[-2].startswith("Error: _TRANSPORT: list topics: ")


def test_the_logger_is_as_before_after_a_run() -> None:
    """Many runs in one process (tests): each leaves librdkafka's logger as it found it."""
    args = ["topics", "list", "-v", "-b", f"127.0.0.1:{free_port()}", "--timeout", "0.5"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "Connection refused" in r.stderr, r.output
    assert LIBRDKAFKA_LOG.handlers == [] and LIBRDKAFKA_LOG.propagate
