"""Admin commands against a port nobody listens on fail at once with ``_TRANSPORT`` and the
unreachable-broker hint (real librdkafka): ``users list``, ``groups list`` and ``groups describe``
waited out the whole 15 s ``--timeout`` and said ``_TIMED_OUT`` ("no answer from the broker"),
``topics`` waited it out too. A dead server before a live one in ``-b`` is not "unreachable":
the commands are served by the live one."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from tests.integration.broker_process import BrokerProcess, free_port
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "context"),
    [
        (["users", "list"], "describe cluster"),  # scram_users first checks the caller's rights
        (["groups", "list"], "list groups"),
        (["groups", "describe", "g"], "describe group g"),
        (["topics", "list"], "list topics"),
        (["topics", "describe", "t"], "metadata for t"),
        (["configs", "describe", "--topic", "t"], "describe configs of t"),
    ],
)
def test_a_port_nobody_listens_on_fails_at_once(args: list[str], context: str) -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = CliRunner().invoke(main, [*args, "-b", address])  # --timeout 15
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output
    error, hint = result.stderr.splitlines()
    assert error.startswith(f"Error: _TRANSPORT: {context}: no broker could be reached: "), error
    assert "Connection refused" in error  # librdkafka's last connection error
    assert hint == (
        f"hint: could not talk to the broker at {address}: is it running, and does its"
        " listener need TLS or SASL (-X security.protocol=...)? -v shows librdkafka's log"
    )
    assert elapsed < 5, elapsed  # not the 15 s --timeout
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["groups", "list"], ["users", "list"], ["topics", "list"]])
def test_a_dead_server_before_a_live_one_is_no_error(
    shared_broker: BrokerProcess, args: list[str]
) -> None:
    bootstrap = f"127.0.0.1:{free_port()},{shared_broker.bootstrap}"
    result = CliRunner().invoke(main, [*args, "-b", bootstrap])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
