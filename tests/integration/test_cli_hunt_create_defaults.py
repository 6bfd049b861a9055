"""``topics create NAME`` without ``--partitions`` takes the broker's ``num.partitions``, as
kafka-topics.sh does since Kafka 2.4 (KIP-464); the CLI always asked for 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from confluent_kafka.admin import AdminClient

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_create_takes_the_broker_default_partition_count(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data", extra_args=["--config", "num.partitions=3"]) as broker:
        env = {"TIERED_MQ_BOOTSTRAP": broker.bootstrap}
        r = CliRunner().invoke(main, ["topics", "create", "by-default"], env=env)
        assert r.exit_code == 0, r.output
        assert r.stdout == "Created topic by-default (3 partitions, replication factor 1).\n"
        r = CliRunner().invoke(main, ["topics", "create", "given", "-p", "2"], env=env)
        assert r.stdout == "Created topic given (2 partitions, replication factor 1).\n"
        metadata = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
        assert len(metadata.topics["by-default"].partitions) == 3
        assert len(metadata.topics["given"].partitions) == 2
