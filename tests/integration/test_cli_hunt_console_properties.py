"""kafka-console-producer/consumer's ``--property`` names on ``produce`` and ``consume``
(``-X``/``--property``), checked against kcat on a real broker: what a Kafka operator types
(``--property parse.key=true --property key.separator=:``) reads and prints lines as Kafka's
tools do, instead of failing as an unknown librdkafka property."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def run(bootstrap: str, *args: str, input: bytes | None = None) -> Result:
    result = CliRunner().invoke(
        main, list(args), input=input, env={"TIERED_MQ_BOOTSTRAP": bootstrap}
    )
    assert result.exit_code == 0, result.output
    return result


def kcat_read(bootstrap: str, topic: str, count: int) -> list[str]:
    """``key(key length)|value(value length)|headers`` of each record, as kcat reads them (a null
    key or value has length -1)."""
    read = ["-C", "-t", topic, "-o", "beginning", "-c", str(count), "-q"]
    out = subprocess.run(
        ["kcat", "-b", bootstrap, *read, "-f", "%k(%K)|%s(%S)|%h\\n"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.splitlines()


def test_producer_line_reader_properties(shared_broker: BrokerProcess) -> None:
    """parse.headers, parse.key with key.separator, and null.marker: a null key, a null value
    (a tombstone, which the CLI could not send before) and a null header value."""
    bootstrap, topic = shared_broker.bootstrap, f"reader-{uuid.uuid4().hex[:8]}"
    run(bootstrap, "topics", "create", topic)
    lines = b"a:1,b:NULL\tk1|v1\nh:x\tNULL|NULL\n\tk3|\n"
    props = ["parse.headers=true", "parse.key=true", "key.separator=|", "null.marker=NULL"]
    run(bootstrap, "produce", topic, *[f"--property={p}" for p in props], input=lines)
    assert kcat_read(bootstrap, topic, 3) == [
        "k1(2)|v1(2)|a=1,b=NULL",  # kcat prints a null header value as NULL
        "(-1)|(-1)|h=x",
        "k3(2)|(0)|",
    ]


def test_producer_ignore_error_sends_a_line_without_separator_keyless(
    shared_broker: BrokerProcess,
) -> None:
    bootstrap, topic = shared_broker.bootstrap, f"ignore-{uuid.uuid4().hex[:8]}"
    run(bootstrap, "topics", "create", topic)
    props = ["-X", "parse.key=true", "-X", "key.separator=:", "-X", "ignore.error=true"]
    run(bootstrap, "produce", topic, *props, input=b"k:v\nno-key\n")
    assert kcat_read(bootstrap, topic, 2) == ["k(1)|v(1)|", "(-1)|no-key(6)|"]


def test_consumer_formatter_properties(shared_broker: BrokerProcess) -> None:
    """Records kcat produced (header, null key, tombstone) printed with print.* properties,
    Kafka's Partition:/Offset: fields, key.separator and null.literal."""
    bootstrap, topic = shared_broker.bootstrap, f"fmt-{uuid.uuid4().hex[:8]}"
    run(bootstrap, "topics", "create", topic)
    subprocess.run(
        ["kcat", "-b", bootstrap, "-P", "-t", topic, "-K", ":", "-Z", "-H", "h=1"],
        input=b"k1:v1\n:\n",
        check=True,
        timeout=60,
    )
    props = [
        "print.key=true",
        "print.partition=true",
        "print.offset=true",
        "print.headers=true",
        "key.separator=;",
        "null.literal=<nil>",
    ]
    args = ["consume", topic, "--from-beginning", "-n", "2"]
    r = run(bootstrap, *args, *[f"--property={p}" for p in props])
    assert r.stdout.splitlines() == [
        "Partition:0;Offset:0;h:1;k1;v1",
        "Partition:0;Offset:1;h:1;<nil>;<nil>",
    ]
    r = run(bootstrap, *args, "-X", "print.key=true", "-X", "print.value=false")
    assert r.stdout.splitlines() == ["k1", "null"]


def test_header_without_value_is_null_as_kcat_sends_it(shared_broker: BrokerProcess) -> None:
    """``-H KEY`` alone: a header with a null value, as kcat's ``-H KEY`` (it was refused)."""
    bootstrap, topic = shared_broker.bootstrap, f"nullhdr-{uuid.uuid4().hex[:8]}"
    run(bootstrap, "topics", "create", topic)
    run(bootstrap, "produce", topic, "-H", "solo", "-H", "a=b", "-H", "e=", input=b"v\n")
    assert kcat_read(bootstrap, topic, 1) == ["(-1)|v(1)|solo=NULL,a=b,e="]
    r = run(bootstrap, "consume", topic, "--from-beginning", "-n", "1", "--print-headers")
    assert r.stdout.splitlines() == ["solo:null,a:b,e:\tv"]
