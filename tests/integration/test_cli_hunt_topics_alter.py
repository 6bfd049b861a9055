"""kafka-topics.sh options a script reaches for: ``--alter --partitions`` (``topics alter``)
and ``--if-not-exists`` / ``--if-exists``, which make a re-run of a setup script exit 0."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result
from confluent_kafka.admin import AdminClient

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_alter_partitions_and_if_exists(shared_broker: BrokerProcess) -> None:
    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env={"TIERED_MQ_BOOTSTRAP": bootstrap})

    bootstrap, topic = shared_broker.bootstrap, f"grow-{uuid.uuid4().hex[:8]}"
    assert run("topics", "create", topic, "-p", "2").exit_code == 0
    again = run("topics", "create", topic, "-p", "2", "--if-not-exists")
    assert again.exit_code == 0 and "already exists" in again.stderr

    grown = run("topics", "alter", topic, "--partitions", "5")
    assert grown.exit_code == 0, grown.output
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    assert sorted(metadata.topics[topic].partitions) == [0, 1, 2, 3, 4]
    shrink = run("topics", "alter", topic, "--partitions", "3")
    assert shrink.exit_code == 1 and "INVALID_PARTITIONS" in shrink.stderr

    missing = f"missing-{uuid.uuid4().hex[:8]}"
    for args in (
        ["describe", missing],
        ["delete", missing],
        ["alter", missing, "-p", "3"],
        ["alter-config", missing, "--set", "retention.ms=1"],
    ):
        assert run("topics", *args).exit_code == 1
        quiet = run("topics", *args, "--if-exists")
        assert quiet.exit_code == 0 and "does not exist" in quiet.stderr, quiet.output
