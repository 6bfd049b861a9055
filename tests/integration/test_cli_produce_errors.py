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
        "Error: line 3 not sent: MESSAGE_TOO_LARGE: its record (1200036 bytes with key, headers"
        " and librdkafka's 36-byte record overhead) is larger than the producer's"
        " message.max.bytes (1000000;" in produced.stderr
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


@pytest.mark.parametrize(
    ("key", "headers", "fits"),
    [
        (b"", [], 1_000_000 - 36),
        (b"k", ["trace=abc"], 1_000_000 - 36 - 1 - (1 + 5) - (1 + 3)),
    ],
)
def test_the_size_reported_for_a_refused_line_is_the_one_compared_with_the_limit(
    shared_broker: BrokerProcess, key: bytes, headers: list[str], fits: int
) -> None:
    """At the limit librdkafka applies (key, value, headers and its 36-byte record overhead
    against message.max.bytes): the largest line that fits is produced, one byte more is
    refused, and the error gives a size above the limit. It reported the value and key alone
    before, e.g. a 999,965-byte line as "its record (999965 bytes) is larger than the
    producer's message.max.bytes (1000000)"."""
    topic = f"limit-{uuid.uuid4().hex[:8]}"
    created = run(shared_broker.bootstrap, "topics", "create", topic)
    assert created.exit_code == 0, created.output
    prefix = key + b":" if key else b""
    lines = [prefix + b"a" * fits, prefix + b"b" * (fits + 1)]
    args = ["produce", topic, *(["-K", ":"] if key else []), *(f"-H{h}" for h in headers)]
    produced = run(shared_broker.bootstrap, *args, input=b"\n".join(lines) + b"\n")

    assert produced.exit_code == 1, produced.output
    assert "Produced 1 record" in produced.stderr, produced.stderr
    reported = produced.stderr.split("line 2 not sent: MESSAGE_TOO_LARGE: its record (")[1]
    assert int(reported.split()[0]) == 1_000_001, produced.stderr
    assert "line 1" not in produced.stderr, produced.stderr
    consumed = run(shared_broker.bootstrap, "consume", topic, "--from-beginning", "-n", "1")
    assert consumed.exit_code == 0, consumed.output
    assert len(consumed.stdout.splitlines()[0]) == fits
