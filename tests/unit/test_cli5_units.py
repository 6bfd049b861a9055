"""CLI hunt 5, the parts a user checks without a broker: the producer's bounded retries and
how ``-X retries`` and ``--message-send-max-retries`` set them, ``--print-offset``'s fields as
kafka-console-consumer prints them, one ``-X`` option for produce and consume (Kafka's
``--producer-property``/``--consumer-property`` too), the all-brokers-down look-up
(``_reach.py``), ``tier status``'s table and ``groups delete`` without a group."""

from __future__ import annotations

import time
from typing import Any

import pytest
from click.testing import CliRunner
from confluent_kafka import KafkaError

from tests.unit.cli.test_produce_consume import FakeConsumer
from tiered_mq.cli import consume as consume_cli
from tiered_mq.cli import main
from tiered_mq.cli._line_format import LineFormat
from tiered_mq.cli._line_reader import LineReader
from tiered_mq.cli._reach import BrokerWatch, reach
from tiered_mq.cli._table import format_table
from tiered_mq.cli.produce import producer_properties
from tiered_mq.cli.tier import _status_table
from tiered_mq.client.errors import ClientError
from tiered_mq.client.record import ConsumedRecord


def test_the_producer_retries_three_times_unless_told() -> None:
    assert producer_properties("all", None, {})["retries"] == 3  # Kafka's ConsoleProducer
    assert producer_properties("all", None, {"retries": "7"})["retries"] == "7"
    alias = producer_properties("all", None, {"message.send.max.retries": "9"})
    assert alias["message.send.max.retries"] == "9" and "retries" not in alias
    both = producer_properties("1", 0, {"retries": "7", "message.send.max.retries": "9"})
    assert both == {"acks": "1", "retries": 0}  # the option wins, as Kafka's over the property


def test_print_offset_is_kafkas_partition_and_offset_fields() -> None:
    record = ConsumedRecord(
        topic="t", partition=3, offset=41, key=b"k", value=b"v", timestamp_ms=5, headers=[]
    )
    flags = LineFormat.of({}, partition=True, offset=True, key=True).formatter()
    props = {"print.partition": "true", "print.offset": "true", "print.key": "true"}
    assert flags(record) == b"Partition:3\tOffset:41\tk\tv\n"
    assert LineFormat.of(props).formatter()(record) == flags(record)


@pytest.mark.parametrize(
    ("command", "tool", "alias"),
    [
        ("produce", "kafka-console-producer's line reader", "--producer-property"),
        ("produce", "kafka-console-producer's line reader", "--reader-property"),
        ("consume", "kafka-console-consumer's formatter", "--consumer-property"),
        ("consume", "kafka-console-consumer's formatter", "--formatter-property"),
    ],
)
def test_one_property_option_for_produce_and_consume(command: str, tool: str, alias: str) -> None:
    r = CliRunner().invoke(main, [command, "--help"])
    text = "".join(r.output.split())  # no wrapping: the help may break a line anywhere
    wanted = f"KEY=VALUE librdkafka client property, or {tool}"
    assert f"-X,--property,--{command[:-1]}er-property," in text
    assert "".join(wanted.split()) in text
    bad = CliRunner().invoke(main, [command, "t", alias, "print.key"])
    assert bad.exit_code == 2 and "expected KEY=VALUE, got 'print.key'" in bad.output


def test_the_line_terminator_is_removed_once_by_either_parser() -> None:
    reader = LineReader(key_separator=b":")
    for line in (b"k:v\r\n", b"k:v\n", b"k:v", b"k:v\r\r\n"):
        assert reader.parser()(line) == reader.parse(line)
    assert reader.parse(b"k:v\r\r\n")[2] == b"v\r"  # one terminator only


def _error(code: int) -> KafkaError:
    return KafkaError(code, "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed")


def test_reach_fails_at_once_when_every_broker_is_reported_down() -> None:
    watch = BrokerWatch()
    rounds: list[float] = []

    def unreachable(seconds: float) -> list[int]:
        rounds.append(seconds)
        watch(_error(KafkaError._TRANSPORT))  # librdkafka reports each failed connection
        if len(rounds) == 2:
            watch(_error(KafkaError._ALL_BROKERS_DOWN))
        raise ClientError("_TRANSPORT", "metadata for t: Local: Broker transport failure")

    started = time.monotonic()
    with pytest.raises(ClientError) as raised:
        reach(unreachable, lambda: None, watch, "t", 60.0)
    assert time.monotonic() - started < 2  # two rounds of 0.5 s, not the 10 s bound
    assert len(rounds) == 2
    assert str(raised.value) == (
        "_TRANSPORT: metadata for t: no broker could be reached: 127.0.0.1:1/bootstrap: Connect"
        " to ipv4#127.0.0.1:1 failed"
    )


def test_reach_goes_on_while_a_broker_answers_and_names_topic_errors() -> None:
    watch = BrokerWatch()
    answers: list[Any] = [ClientError("_TIMED_OUT", "slow"), [0, 1]]

    def slow(seconds: float) -> list[int]:
        answer = answers.pop(0)
        if isinstance(answer, ClientError):
            watch(_error(KafkaError._ALL_BROKERS_DOWN))  # an old report: a broker answers
            raise answer
        assert seconds > 5  # reached but slow: the rest of the timeout in one call
        return list(answer)

    assert reach(slow, lambda: None, watch, "t", 10.0) == [0, 1]
    assert watch.started

    def unknown(seconds: float) -> list[int]:
        raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", "t", 3)

    with pytest.raises(ClientError, match="UNKNOWN_TOPIC_OR_PARTITION"):
        reach(unknown, lambda: None, BrokerWatch(), "t", 10.0)


def test_consume_notes_a_lost_broker_only_after_the_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    watch = BrokerWatch(note_when_lost=True)
    watch(_error(KafkaError._ALL_BROKERS_DOWN))
    assert capsys.readouterr().err == ""  # the start: reach's error says it
    watch.started = True
    watch(_error(KafkaError._ALL_BROKERS_DOWN))
    assert "Warning: _ALL_BROKERS_DOWN: lost the connection to every broker" in (
        capsys.readouterr().err
    )


def test_tier_status_table_is_format_tables() -> None:
    rows = [
        {
            "topic": "a-long-topic-name",
            "partition": 0,
            "remote_log_start_offset": 0,
            "remote_end_offset": 1234,
            "segments": 3,
            "size_bytes": 10_485_760,
            "copy_lag_segments": 0,
            "copy_lag_bytes": 0,
        },
        {
            "topic": "b",
            "partition": 11,
            "remote_log_start_offset": None,
            "remote_end_offset": -1,
            "segments": 0,
            "size_bytes": 0,
            "copy_lag_segments": 2,
            "copy_lag_bytes": 2048,
        },
    ]
    assert _status_table(rows, with_lag=True).splitlines() == [
        "partition            remote offsets  segments     bytes  lag segs  lag bytes",
        "a-long-topic-name-0         0..1234         3  10485760         0          0",
        "b-11                              -         0         0         2       2048",
    ]
    assert format_table(["A", "N"], [("x", 5), ("yy", None)], right={1}).splitlines() == [
        "A   N",
        "x   5",
        "yy  -",
    ]


def test_groups_delete_takes_all_groups_as_kafka_does() -> None:
    r = CliRunner().invoke(main, ["groups", "delete"])
    assert r.exit_code == 2
    assert "Error: give GROUP (one or more) or --all-groups" in r.output
    both = CliRunner().invoke(main, ["groups", "delete", "g", "--all-groups"])
    assert both.exit_code == 2 and "give GROUP (one or more) or --all-groups" in both.output


@pytest.mark.parametrize(
    "args", [["consume", "t", "--separator", ""], ["consume", "t", "-X", "key.separator="]]
)
def test_an_empty_field_separator_is_a_usage_error(args: list[str]) -> None:
    """The key and the value ran together (``--print-key --separator ''``: ``nulla``)."""
    r = CliRunner().invoke(main, [*args, "-b", "127.0.0.1:1"])
    assert r.exit_code == 2 and "cannot be empty" in r.output, r.output


def test_acks_merge_as_kafkas_console_producer() -> None:
    """The option if given, else ``-X acks`` (-X used to win over an explicit ``--acks``)."""
    assert producer_properties(None, None, {})["acks"] == "all"
    assert producer_properties(None, None, {"acks": "1"})["acks"] == "1"
    assert producer_properties("0", None, {"acks": "1"})["acks"] == "0"
    alias = producer_properties("0", None, {"request.required.acks": "1"})
    assert alias["acks"] == "0" and "request.required.acks" not in alias


def test_x_group_id_is_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consume_cli, "Consumer", FakeConsumer)
    monkeypatch.setattr(FakeConsumer, "records", [])
    r = CliRunner().invoke(main, ["consume", "t", "-X", "group.id=g1", "--idle-timeout", "0"])
    assert r.exit_code == 0, r.output
    consumer = FakeConsumer.last
    assert consumer.config.group_id == "g1" and consumer.subscribed == ["t"]
    assert "group.id" not in consumer.config.extra
    args = ["consume", "t", "-g", "g1", "-X", "group.id=g1", "--idle-timeout", "0"]
    same = CliRunner().invoke(main, args)
    assert same.exit_code == 0, same.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-g", "g1", "-X", "group.id=g2"], "two group ids given: --group g1 and -X group.id=g2"),
        (["--from-beginning", "-X", "auto.offset.reset=latest"], "not both"),
    ],
)
def test_conflicting_consumer_settings_are_usage_errors(args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["consume", "t", *args, "-b", "127.0.0.1:1"])
    assert r.exit_code == 2 and message in r.output, r.output
