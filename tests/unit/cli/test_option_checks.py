"""Values the CLI refuses as usage errors (exit status 2) before any work, where it used to
go on with a wrong result, and the progress bar that only a terminal gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import dev as dev_cli
from tiered_mq.cli import main
from tiered_mq.cli import produce as produce_cli
from tiered_mq.client.config import ProducerConfig

DEAD = "127.0.0.1:1"


class NoBroker:
    """``dev``'s Broker, refusing to start: a test that gets this far found no usage error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ValueError("the options were accepted")


@pytest.mark.parametrize("option", ["--port", "--metrics-port"])
@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_dev_refuses_a_port_out_of_range(
    option: str, port: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--port 99999`` started a broker listening on 34463 (99999 - 65536) that printed, and
    advertised to clients, 127.0.0.1:99999."""
    monkeypatch.setattr(dev_cli, "Broker", NoBroker)
    r = CliRunner().invoke(main, ["dev", "--data-dir", str(tmp_path), option, port])
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '{option}'" in r.output
    assert "0<=x<=65535" in r.output


def test_dev_takes_the_whole_port_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dev_cli, "Broker", NoBroker)
    args = ["dev", "--data-dir", str(tmp_path), "--port", "0", "--metrics-port", "65535"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "the options were accepted" in r.output, r.output


def test_tier_status_refuses_a_data_dir_that_does_not_exist(tmp_path: Path) -> None:
    """A mistyped ``--data-dir`` showed a copy lag of 0 for every partition."""
    cold = tmp_path / "cold"
    cold.mkdir()
    missing = tmp_path / "no-such-dir"
    r = CliRunner().invoke(main, ["tier", "status", str(cold), "--data-dir", str(missing)])
    assert r.exit_code == 2, r.output
    assert "does not exist" in r.output
    r = CliRunner().invoke(main, ["tier", "status", str(cold), "--data-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("timeout", ["0", "-1"])
def test_a_timeout_must_be_positive(timeout: str) -> None:
    """``--timeout -1`` ran with a 0.1 s wait, ``--timeout 0`` likewise."""
    r = CliRunner().invoke(main, ["topics", "list", "-b", DEAD, "--timeout", timeout])
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--timeout'" in r.output


def test_an_idle_timeout_cannot_be_negative() -> None:
    """``consume --idle-timeout -1`` ended at once with 0 messages and exit status 0."""
    r = CliRunner().invoke(main, ["consume", "t", "-b", DEAD, "--idle-timeout", "-1"])
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--idle-timeout'" in r.output


class FakeProducer:
    sent: list[tuple[Any, Any]]
    last: FakeProducer

    def __init__(self, config: ProducerConfig) -> None:
        self.config = config
        self.sent = []
        FakeProducer.last = self

    def send(self, topic: str, value: Any, key: Any = None, **kw: Any) -> None:
        self.sent.append((key, value))

    def flush(self, timeout: float = 30.0) -> None:
        pass

    def partitions_for(
        self, topic: str, timeout: float = 10.0, unreachable_timeout: float | None = None
    ) -> list[int]:
        return [0]  # the broker is reached before any input is read


def test_an_empty_key_separator_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-K ''`` sent each whole line as a value without a key, as if no -K were given."""
    monkeypatch.setattr(produce_cli, "Producer", FakeProducer)
    r = CliRunner().invoke(main, ["produce", "t", "-K", ""], input="k:v\n")
    assert r.exit_code == 2, r.output
    assert "the key separator cannot be empty" in r.output


def test_max_block_ms_reaches_the_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(produce_cli, "Producer", FakeProducer)
    r = CliRunner().invoke(main, ["produce", "t", "--max-block-ms", "1500"], input="v\n")
    assert r.exit_code == 0, r.output
    assert FakeProducer.last.config.max_block_ms == 1500
    r = CliRunner().invoke(main, ["produce", "t"], input="v\n")
    assert FakeProducer.last.config.max_block_ms == 60_000  # Kafka's default


def test_no_progress_bar_when_stderr_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``produce -f big.txt 2>log`` wrote tqdm's \\r-separated frames (``37%|###``) into the
    log; now stderr holds the summary line only."""
    monkeypatch.setattr(produce_cli, "Producer", FakeProducer)
    data = tmp_path / "in.txt"
    data.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    r = CliRunner().invoke(main, ["produce", "t", "-f", str(data)])
    assert r.exit_code == 0, r.output
    assert len(FakeProducer.last.sent) == 1000
    assert "\r" not in r.stderr and "%|" not in r.stderr, r.stderr
    assert r.stderr.startswith("Produced 1000 records"), r.stderr


@pytest.mark.parametrize("command", ["inspect", "scrub", "status"])
@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--s3-endpoint", "not-a-url", "Invalid endpoint: not-a-url"),
        ("--s3-endpoint", "http://[::1", "Invalid IPv6 URL"),
        ("--s3-region", "bad region!", "Provided region_name 'bad region!'"),
    ],
)
def test_tier_refuses_bad_s3_settings_without_a_traceback(
    command: str, option: str, value: str, said: str
) -> None:
    """botocore's ValueError for a malformed endpoint or region came out as a traceback."""
    args = ["tier", command, "s3://bucket/prefix", option, value]
    r = CliRunner().invoke(main, args, env={"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"})
    assert r.exit_code == 2, r.output
    assert isinstance(r.exception, SystemExit)
    assert f"Error: S3 settings: {said}" in r.output
