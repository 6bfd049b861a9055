"""``--config`` keys a Kafka operator brings along: Kafka's own settings for what one broker
without replication does not have are accepted and logged as not used (as Kafka logs what it
does not use); settings whose meaning would silently change are refused with the reason; a key
that is neither a Kafka setting nor a topic config (a misspelling) is refused as such.

Before, every Kafka broker setting this broker did not implement was taken for a topic default,
and the start failed with ``INVALID_CONFIG: num.network.threads: unknown topic config``, which
points at topics rather than at the broker setting.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.cli import main


@pytest.mark.parametrize("key", ["segmnt.ms", "num.netwrk.threads", "retenton.ms"])
def test_a_broker_is_not_made_with_an_unknown_key(tmp_path: Path, key: str) -> None:
    config = BrokerConfig(tmp_path, overrides={key: "3"})
    with pytest.raises(ValueError, match=rf"^config {key}='3' is unknown: not a broker config"):
        Broker(config)


def test_kafka_settings_without_effect_here_are_accepted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    given = {
        "num.network.threads": "3",
        "inter.broker.listener.name": "INTERNAL",
        "replica.lag.time.max.ms": "30000",
        "background.threads": "10",
    }
    config = BrokerConfig(tmp_path, overrides=given)
    with caplog.at_level(logging.WARNING):
        Broker(config)
    assert config.unused == sorted(given)
    warning = next(r.getMessage() for r in caplog.records if "not used" in r.getMessage())
    assert all(key in warning for key in given)
    assert config.get("num.network.threads") == "3"  # stored, as DescribeConfigs shows it


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("log.dirs", "use --data-dir"),
        ("process.roles", "KRaft mode is not supported"),
        ("create.topic.policy.class.name", "no topic policy can be plugged in"),
        ("principal.builder.class", "it names a Java class"),
    ],
)
def test_settings_whose_meaning_would_change_are_refused(
    tmp_path: Path, key: str, reason: str
) -> None:
    config = BrokerConfig(tmp_path, overrides={key: "x"})
    with pytest.raises(ValueError, match=rf"^broker config {key}='x' is not supported: .*{reason}"):
        Broker(config)


def test_topic_configs_and_their_broker_names_are_still_taken(tmp_path: Path) -> None:
    overrides = {"segment.ms": "1000", "log.retention.hours": "1", "compression.type": "zstd"}
    config = BrokerConfig(tmp_path, overrides=overrides)
    config.check_values()
    assert config.unused == []


def test_dev_names_the_unknown_key_as_a_config_not_a_topic_config(tmp_path: Path) -> None:
    args = ["dev", "--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path / "data"),
            "--config", "num.netwrk.threads=3"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "config num.netwrk.threads='3' is unknown: not a broker config" in result.output
    assert "topic config:" not in result.output and "unknown topic config" not in result.output
    assert not (tmp_path / "data").exists()  # refused before the data dir is touched
