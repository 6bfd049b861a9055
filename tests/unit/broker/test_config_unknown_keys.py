"""A ``--config`` key that is neither a broker config nor a topic config is refused as such.

A Kafka operator's server.properties holds broker configs this broker does not implement
(``num.network.threads``, ``inter.broker.listener.name``). Such a key was taken for a topic
default, and the start failed with ``INVALID_CONFIG: num.network.threads: unknown topic config``,
which points at topics rather than at the broker setting.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.cli import main


@pytest.mark.parametrize("key", ["num.network.threads", "inter.broker.listener.name", "segmnt.ms"])
def test_a_broker_is_not_made_with_an_unknown_key(tmp_path: Path, key: str) -> None:
    config = BrokerConfig(tmp_path, overrides={key: "3"})
    with pytest.raises(ValueError, match=rf"^config {key}='3' is unknown: not a broker config"):
        Broker(config)


def test_topic_configs_and_their_broker_names_are_still_taken(tmp_path: Path) -> None:
    overrides = {"segment.ms": "1000", "log.retention.hours": "1", "compression.type": "zstd"}
    BrokerConfig(tmp_path, overrides=overrides).check_values()


def test_dev_names_the_unknown_key_as_a_config_not_a_topic_config(tmp_path: Path) -> None:
    args = ["dev", "--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path / "data"),
            "--config", "num.network.threads=3"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "config num.network.threads='3' is unknown: not a broker config" in result.output
    assert "topic config:" not in result.output and "unknown topic config" not in result.output
    assert not (tmp_path / "data").exists()  # refused before the data dir is touched
