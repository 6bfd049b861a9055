"""``tiered-mq dev`` options that reach the broker's config (the broker itself is not started)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import dev


def _config_of(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]) -> Any:
    seen: list[Any] = []

    def refuse(config: Any, metrics_port: int) -> None:
        seen.append(config)
        raise ValueError("not started in this test")

    monkeypatch.setattr(dev, "Broker", refuse)
    result = CliRunner().invoke(dev.command, args, env=env)
    assert "not started in this test" in result.output
    return seen[0]


def test_s3_endpoint_comes_from_the_environment_as_for_the_tier_commands(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args = ["--data-dir", str(tmp_path), "--cold-url", "s3://b/p"]
    env = {"TIERED_MQ_S3_ENDPOINT": "http://127.0.0.1:9000"}
    assert _config_of(monkeypatch, args, env).s3_endpoint == "http://127.0.0.1:9000"
    flag = [*args, "--s3-endpoint", "http://other:9000"]
    assert _config_of(monkeypatch, flag, env).s3_endpoint == "http://other:9000"


def test_an_unknown_log_level_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(dev, "Broker", None)  # never started, whatever happens
    args = ["--data-dir", str(tmp_path), "--port", "0", "--log-level", "verbose"]
    r = CliRunner().invoke(dev.command, args)
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--log-level'" in r.output


def test_the_log_level_is_case_insensitive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _config_of(monkeypatch, ["--data-dir", str(tmp_path), "--log-level", "debug"], {})
