"""``produce`` whose records the broker partly refuses says how many it acknowledged before
the error (the summary line was skipped: the operator saw only the refused count)."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_partly_refused_input_reports_what_was_delivered(shared_broker: BrokerProcess) -> None:
    env = {"TIERED_MQ_BOOTSTRAP": shared_broker.bootstrap}
    topic = f"partial-{uuid.uuid4().hex[:8]}"
    create = ["topics", "create", topic, "-c", "max.message.bytes=300"]
    assert CliRunner().invoke(main, create, env=env).exit_code == 0
    lines = "a\n" + "x" * 1000 + "\nb\n"  # one record a batch: only the long one is refused
    args = ["produce", topic, "-X", "batch.num.messages=1", "--linger-ms", "0"]
    r = CliRunner().invoke(main, args, input=lines, env=env)
    assert r.exit_code == 1, r.output
    assert f"Produced 2 of 3 records to {topic} (1 not delivered)" in r.stderr
    assert "MESSAGE_TOO_LARGE" in r.stderr
