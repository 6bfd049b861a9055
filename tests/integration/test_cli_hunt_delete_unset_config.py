"""``topics alter-config T --delete K`` (and ``configs alter --topic T --delete K``) of a
config the topic does not set is INVALID_CONFIG, as kafka-configs.sh --delete-config makes it
("Invalid config(s)"); it printed "Altered configs of T: -K" and exited 0 having changed
nothing."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli import main

pytestmark = pytest.mark.integration


def test_deleting_a_config_the_topic_does_not_set(shared_broker: BrokerProcess) -> None:
    def run(*args: str) -> Result:
        env = {"TIERED_MQ_BOOTSTRAP": shared_broker.bootstrap}
        return CliRunner().invoke(main, list(args), env=env)

    topic = f"unset-{uuid.uuid4().hex[:8]}"
    assert run("topics", "create", topic, "-c", "retention.ms=60000").exit_code == 0
    for command in (["topics", "alter-config", topic], ["configs", "alter", "--topic", topic]):
        r = run(*command, "--delete", "retention.bytes")
        assert r.exit_code == 1, r.output
        assert f"INVALID_CONFIG: {topic} does not set retention.bytes" in r.stderr
    assert run("topics", "alter-config", topic, "--delete", "retention.ms").exit_code == 0
    again = run("topics", "alter-config", topic, "--delete", "retention.ms")
    assert again.exit_code == 1 and "does not set retention.ms" in again.stderr
