"""``tiered-mq produce`` when a line cannot be sent: the other lines still are, and the error
names the line (against a real ``tiered-mq dev`` broker, in-process CliRunner)."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def run(bootstrap: str, *args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input, env={"TIERED_MQ_BOOTSTRAP": bootstrap})


def test_a_line_above_message_max_bytes_is_reported_and_the_rest_are_sent(
    shared_broker: BrokerProcess,
) -> None:
    """Line 3 is 1.2 MB, above librdkafka's message.max.bytes (1,000,000): it is named on
    stderr with its size and the limit, lines 1-2 and 4-5 are produced in order, the summary
    counts them, and the exit status is 1."""
    topic = f"too-large-{uuid.uuid4().hex[:8]}"
    created = run(shared_broker.bootstrap, "topics", "create", topic)
    assert created.exit_code == 0, created.output
    lines = [b"a", b"b", b"x" * 1_200_000, b"d", b"e"]
    produced = run(shared_broker.bootstrap, "produce", topic, input=b"\n".join(lines) + b"\n")

    assert produced.exit_code == 1, produced.output
    assert (
        "Error: line 3 not sent: MESSAGE_TOO_LARGE: its record (1200000 bytes) is larger than"
        " the producer's message.max.bytes (1000000;" in produced.stderr
    )
    assert "Produced 4 records (4 bytes)" in produced.stderr
    assert "1 line(s) not sent, larger than message.max.bytes (the first: line 3)" in (
        produced.stderr
    )
    consumed = run(shared_broker.bootstrap, "consume", topic, "--from-beginning", "-n", "4")
    assert consumed.exit_code == 0, consumed.output
    assert consumed.stdout.splitlines() == ["a", "b", "d", "e"]


def test_a_repeated_header_key_keeps_every_value(shared_broker: BrokerProcess) -> None:
    """``-H trace=a -H trace=b -H src=cli``: the record carries all three headers, in order
    (Kafka record headers may repeat a key); one value was silently dropped before."""
    topic = f"headers-{uuid.uuid4().hex[:8]}"
    args = ["produce", topic, "-H", "trace=a", "-H", "trace=b", "-H", "src=cli"]
    produced = run(shared_broker.bootstrap, *args, input=b"v\n")
    assert produced.exit_code == 0, produced.output
    consumed = run(
        shared_broker.bootstrap, "consume", topic, "--from-beginning", "-n", "1", "--print-headers"
    )
    assert consumed.exit_code == 0, consumed.output
    assert consumed.stdout.splitlines() == ["trace:a,trace:b,src:cli\tv"]
