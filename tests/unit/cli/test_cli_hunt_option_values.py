"""Option values that the broker or librdkafka would read as something else: a negative
``consume --timestamp`` is a ListOffsets sentinel (-1 latest, -2 earliest), a negative
``produce --partition`` librdkafka's "any partition"; a non-boolean console property."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.cli.test_produce_consume import FakeProducer
from tiered_mq.cli import main, produce


@pytest.mark.parametrize(
    "args",
    [
        ["consume", "t", "--timestamp", "-2"],
        ["consume", "t", "-t", "-1"],
        ["produce", "t", "--partition", "-1"],
        ["produce", "t", "--linger-ms", "-5"],
        ["consume", "t", "-X", "print.key=yes"],
        ["produce", "t", "-X", "parse.key=1"],
    ],
)
def test_bad_values_are_usage_errors(args: list[str]) -> None:
    r = CliRunner().invoke(main, [*args, "-b", "127.0.0.1:1"], input="x\n")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize(
    ("option", "value"), [("--to-datetime", "yesterday"), ("--by-duration", "5m")]
)
def test_reset_offsets_bad_time_names_its_option(option: str, value: str) -> None:
    args = ["groups", "reset-offsets", "g", "--topic", "t", option, value, "-b", "127.0.0.1:1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert f"Invalid value for {option}" in r.output


def test_produce_acks_minus_one_is_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's acks=-1 (kafka-console-producer's --request-required-acks -1) is acks=all."""
    monkeypatch.setattr(produce, "Producer", FakeProducer)
    r = CliRunner().invoke(main, ["produce", "t", "--acks", "-1"], input="x\n")
    assert r.exit_code == 0, r.output
    assert FakeProducer.last.config.to_librdkafka()["acks"] == "-1"
