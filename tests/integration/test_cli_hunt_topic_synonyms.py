"""``configs describe --topic T --synonyms`` lists the levels a topic config falls back to,
as kafka-configs.sh does (it printed ``-`` for every topic config)."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_topic_config_synonyms(shared_broker: BrokerProcess) -> None:
    def run(*args: str) -> Result:
        env = {"TIERED_MQ_BOOTSTRAP": shared_broker.bootstrap}
        result = CliRunner().invoke(main, list(args), env=env)
        assert result.exit_code == 0, result.output
        return result

    topic = f"syn-{uuid.uuid4().hex[:8]}"
    run("topics", "create", topic, "-c", "retention.ms=-1")
    out = run("configs", "describe", "--topic", topic, "--synonyms", "--all").stdout
    rows = {
        name: line.split(maxsplit=3)[3]
        for line in out.splitlines()
        for name in ("retention.ms", "segment.bytes")
        if line.startswith(f"{name} ")
    }
    assert rows["retention.ms"] == (
        "DYNAMIC_TOPIC_CONFIG:retention.ms=-1, DEFAULT_CONFIG:log.retention.hours=168"
    )
    assert rows["segment.bytes"] == "DEFAULT_CONFIG:log.segment.bytes=1073741824"
