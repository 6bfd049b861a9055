"""``produce`` and ``consume`` with the SDK's Producer and Consumer faked."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import consume as consume_cli
from tiered_mq.cli import main
from tiered_mq.cli import produce as produce_cli
from tiered_mq.cli.produce import split_line
from tiered_mq.client.config import ConsumerConfig, ProducerConfig
from tiered_mq.client.consumer import OFFSET_BEGINNING, OFFSET_END
from tiered_mq.client.errors import ClientError, DeliveryError
from tiered_mq.client.record import ConsumedRecord
from tiered_mq.topic_partition import TopicPartition


def test_split_line() -> None:
    assert split_line(b"v\n", None) == (None, b"v")
    assert split_line(b"v\r\n", None) == (None, b"v")
    assert split_line(b"v", None) == (None, b"v")
    assert split_line(b"k:v:w\n", b":") == (b"k", b"v:w")
    assert split_line(b":v\n", b":") == (b"", b"v")
    with pytest.raises(ValueError):
        split_line(b"kv\n", b":")


class FakeProducer:
    last: FakeProducer

    def __init__(self, config: ProducerConfig) -> None:
        self.config = config
        self.sent: list[tuple[str, Any, Any, dict[str, Any]]] = []
        self.flushes = 0
        self.fail = False
        self.delivered = 0
        FakeProducer.last = self

    def send(self, topic: str, value: Any, key: Any = None, **kw: Any) -> None:
        self.sent.append((topic, value, key, kw))

    def partitions_for(
        self, topic: str, timeout: float = 10.0, unreachable_timeout: float | None = None
    ) -> list[int]:
        return [0, 1, 2]  # the broker is reached before any input is read

    def flush(self, timeout: float = 30.0) -> None:
        self.flushes += 1
        if self.config.extra.get("fail") == "yes":
            raise DeliveryError([("t", 0, ClientError("NOT_ENOUGH_REPLICAS", "isr too small", 19))])


@pytest.fixture
def fake_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(produce_cli, "Producer", FakeProducer)


@pytest.mark.usefixtures("fake_producer")
def test_produce_stdin_with_keys_headers_and_options() -> None:
    r = CliRunner().invoke(
        main,
        ["produce", "t", "-K", "|", "-z", "lz4", "--acks", "1", "-H", "src=cli", "-p", "2"],
        input="a|1\nb|2\n",
    )
    assert r.exit_code == 0, r.output
    p = FakeProducer.last
    assert p.config.compression == "lz4"
    assert p.config.to_librdkafka()["acks"] == "1"
    assert [(s[1], s[2]) for s in p.sent] == [(b"1", b"a"), (b"2", b"b")]
    assert p.sent[0][3] == {"partition": 2, "headers": [("src", b"cli")]}
    assert "Produced 2 records (2 bytes) to t" in r.output


@pytest.mark.usefixtures("fake_producer")
def test_produce_summary_singular() -> None:
    r = CliRunner().invoke(main, ["produce", "t"], input="only\n")
    assert r.exit_code == 0, r.output
    assert "Produced 1 record (4 bytes) to t" in r.output


@pytest.mark.usefixtures("fake_producer")
def test_produce_file_and_missing_separator(tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"k1=v1\nk2=v2\nbroken\nk4=v4\n")
    r = CliRunner().invoke(main, ["produce", "t", "--file", str(f), "-K", "="])
    assert r.exit_code == 1
    assert "line 3 has no key separator '='" in r.output
    assert len(FakeProducer.last.sent) == 2
    assert FakeProducer.last.flushes == 1  # what was sent is flushed before the exit


@pytest.mark.usefixtures("fake_producer")
def test_produce_delivery_failure_exits_1() -> None:
    r = CliRunner().invoke(main, ["produce", "t", "-X", "fail=yes"], input="x\n")
    assert r.exit_code == 1
    assert "NOT_ENOUGH_REPLICAS" in r.output


class InterruptedInput(io.BytesIO):
    """Stdin whose reader presses Ctrl-C after the lines it was given."""

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise KeyboardInterrupt
        return line


@pytest.mark.usefixtures("fake_producer")
def test_produce_ctrl_c_delivers_what_was_read() -> None:
    r = CliRunner().invoke(main, ["produce", "t"], input=InterruptedInput(b"a\nb\n"))
    assert r.exit_code == 0, r.output
    assert [s[1] for s in FakeProducer.last.sent] == [b"a", b"b"]
    assert FakeProducer.last.flushes == 1  # not dropped from the queue
    assert "Produced 2 records (2 bytes) to t" in r.output
    assert "Aborted" not in r.output


def test_produce_bad_compression_is_usage_error() -> None:
    r = CliRunner().invoke(main, ["produce", "t", "-z", "brotli"], input="x\n")
    assert r.exit_code == 2


class FakeConsumer:
    last: FakeConsumer
    records: list[ConsumedRecord] = []

    def __init__(self, config: ConsumerConfig) -> None:
        self.config = config
        self.assigned: dict[TopicPartition, int] | None = None
        self.subscribed: list[str] | None = None
        self.acked: list[ConsumedRecord] = []
        self.queue = list(FakeConsumer.records)
        FakeConsumer.last = self

    def __enter__(self) -> FakeConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def partitions_for(self, topic: str, timeout: float = 10.0) -> list[int]:
        if topic == "missing":
            raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", "missing", 3)
        return [0, 1]

    def offsets_for_time(self, tps: list[TopicPartition], ts: int) -> dict[TopicPartition, int]:
        return dict.fromkeys(tps, ts // 1000)

    def assign(self, offsets: dict[TopicPartition, int]) -> None:
        self.assigned = offsets

    def subscribe(self, topics: list[str]) -> None:
        self.subscribed = topics

    def assignment(self) -> list[TopicPartition]:
        return [TopicPartition("t", 0)]

    def poll(self, timeout: float = 1.0) -> ConsumedRecord | None:
        return None  # serves librdkafka's callbacks before anything is assigned

    def consume(self, n: int, timeout: float) -> list[ConsumedRecord]:
        out, self.queue = self.queue[:n], self.queue[n:]
        return out

    def ack(self, *records: ConsumedRecord) -> None:
        self.acked.extend(records)


@pytest.fixture
def fake_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consume_cli, "Consumer", FakeConsumer)
    FakeConsumer.records = [
        ConsumedRecord("t", 0, i, 0, None if i == 1 else f"k{i}".encode(), f"v{i}".encode())
        for i in range(5)
    ]


@pytest.mark.usefixtures("fake_consumer")
def test_consume_groupless_from_beginning_max_messages() -> None:
    r = CliRunner().invoke(main, ["consume", "t", "--from-beginning", "-n", "3", "--print-key"])
    assert r.exit_code == 0, r.output
    c = FakeConsumer.last
    assert c.config.group_id is None and c.subscribed is None
    assert c.assigned == {
        TopicPartition("t", 0): OFFSET_BEGINNING,
        TopicPartition("t", 1): OFFSET_BEGINNING,
    }
    assert r.stdout.splitlines() == ["k0\tv0", "null\tv1", "k2\tv2"]
    assert "Processed a total of 3 messages" in r.stderr


@pytest.mark.usefixtures("fake_consumer")
def test_consume_group_subscribes_and_acks() -> None:
    r = CliRunner().invoke(
        main, ["consume", "t", "-g", "g", "--idle-timeout", "0.2", "--print-offset"]
    )
    assert r.exit_code == 0, r.output
    c = FakeConsumer.last
    assert c.subscribed == ["t"] and c.assigned is None
    assert c.config.group_id == "g" and c.config.auto_offset_reset == "latest"
    assert r.stdout.splitlines()[0] == "Partition:0\tOffset:0\tv0"
    assert len(c.acked) == 5


@pytest.mark.usefixtures("fake_consumer")
def test_consume_offset_timestamp_partition() -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["consume", "t", "-p", "1", "-o", "7", "-n", "1"])
    assert FakeConsumer.last.assigned == {TopicPartition("t", 1): 7}
    r = runner.invoke(main, ["consume", "t", "-t", "5000", "-n", "1"])
    assert FakeConsumer.last.assigned == {TopicPartition("t", 0): 5, TopicPartition("t", 1): 5}
    r = runner.invoke(main, ["consume", "t", "-n", "1"])
    assert set(FakeConsumer.last.assigned.values()) == {OFFSET_END}  # type: ignore[union-attr]
    r = runner.invoke(main, ["consume", "t", "-p", "4", "-n", "1"])
    assert r.exit_code == 1 and "no partition 4" in r.output
    r = runner.invoke(main, ["consume", "missing", "-n", "1"])
    assert r.exit_code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.output
    r = runner.invoke(main, ["consume", "t", "-o", "1", "--from-beginning"])
    assert r.exit_code == 2


def test_consume_help_shows_the_separator_default_readably() -> None:
    r = CliRunner().invoke(main, ["consume", "--help"])
    assert r.exit_code == 0
    line = " ".join(r.output.split("--separator", 1)[1].split("-X,", 1)[0].split())
    assert line.startswith("TEXT Field separator") and line.endswith("[default: (tab)]")
