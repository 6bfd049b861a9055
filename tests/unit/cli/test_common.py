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


def test_commands_registered() -> None:
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for name in ("topics", "produce", "consume", "groups"):
        assert name in r.output
