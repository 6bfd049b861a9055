from __future__ import annotations

import click
import confluent_kafka
import pytest
from click.testing import CliRunner

from tiered_mq.cli import main
from tiered_mq.cli._common import format_table, parse_kv, reports_errors
from tiered_mq.client.errors import ClientError


def test_parse_kv() -> None:
    assert parse_kv(["a=1", "b=x=y", " c =", "d= sp"]) == {
        "a": "1",
        "b": "x=y",
        "c": "",
        "d": " sp",
    }
    for bad in ("novalue", "=v"):
        with pytest.raises(click.BadParameter):
            parse_kv([bad])


def test_format_table_aligns_columns() -> None:
    out = format_table(["A", "LONGER"], [(1, None), ("wide-cell", [1, 2]), ("x", [])])
    assert out.splitlines() == [
        "A          LONGER",
        "1          -",
        "wide-cell  1,2",
        "x          -",
    ]


def test_reports_errors_exit_status_and_message() -> None:
    @click.command()
    @click.argument("kind")
    @reports_errors
    def cmd(kind: str) -> None:
        if kind == "client":
            raise ClientError("TOPIC_ALREADY_EXISTS", "topic t exists", 36)
        if kind == "rd":
            raise confluent_kafka.KafkaException(
                confluent_kafka.KafkaError(confluent_kafka.KafkaError._INVALID_ARG, "bad prop")
            )
        raise ValueError("compression must be one of ...")

    runner = CliRunner()
    r = runner.invoke(cmd, ["client"])
    assert r.exit_code == 1
    assert "Error: TOPIC_ALREADY_EXISTS: topic t exists" in r.output
    r = runner.invoke(cmd, ["rd"])
    assert r.exit_code == 1 and "_INVALID_ARG: bad prop" in r.output
    r = runner.invoke(cmd, ["value"])
    assert r.exit_code == 1 and "compression must be" in r.output


@pytest.mark.parametrize(
    ("name", "lead"),
    [
        ("_TRANSPORT", "could not talk to"),
        ("_ALL_BROKERS_DOWN", "could not talk to"),
        ("_TIMED_OUT", "no answer from"),
    ],
)
def test_unreachable_broker_gets_a_hint(name: str, lead: str) -> None:
    @click.command()
    @click.option("-b", "bootstrap", default="h:9093")
    @reports_errors
    def cmd(bootstrap: str) -> None:
        raise ClientError(name, "list topics: Failed to get metadata", -195)

    r = CliRunner().invoke(cmd, [])
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"Error: {name}: list topics: Failed to get metadata",
        f"hint: {lead} the broker at h:9093: is it running, and does its listener need TLS"
        " or SASL (-X security.protocol=...)? -v shows librdkafka's log",
    ]


def test_hint_also_for_librdkafka_exceptions_and_not_for_other_errors() -> None:
    @click.command()
    @click.argument("code", type=int)
    @click.option("-b", "bootstrap", default="h:1")
    @reports_errors
    def cmd(code: int, bootstrap: str) -> None:
        raise confluent_kafka.KafkaException(confluent_kafka.KafkaError(code, "oops"))

    down = CliRunner().invoke(cmd, ["--", str(confluent_kafka.KafkaError._ALL_BROKERS_DOWN)])
    assert down.exit_code == 1
    assert (
        "Error: _ALL_BROKERS_DOWN: oops\nhint: could not talk to the broker at h:1" in down.output
    )
    auth = CliRunner().invoke(cmd, [str(confluent_kafka.KafkaError.SASL_AUTHENTICATION_FAILED)])
    assert auth.exit_code == 1 and "hint" not in auth.output


def test_commands_registered() -> None:
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for name in ("topics", "produce", "consume", "groups"):
        assert name in r.output
