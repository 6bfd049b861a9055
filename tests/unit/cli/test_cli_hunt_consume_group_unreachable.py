"""``consume -g G`` checks the topic's metadata before joining the group: a broker that cannot
be reached is ``Error: _TRANSPORT`` with the unreachable hint and exit status 1, as without a
group, not a join that waits out ``--idle-timeout`` and reports 0 messages with status 0."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from confluent_kafka import KafkaError

from tests.unit.cli.test_produce_consume import FakeConsumer
from tiered_mq.cli import consume as consume_cli
from tiered_mq.cli import main
from tiered_mq.client.errors import ClientError


class UnreachableConsumer(FakeConsumer):
    def partitions_for(self, topic: str, timeout: float = 10.0) -> list[int]:
        raise ClientError("_TRANSPORT", f"metadata for {topic}: Local: Broker transport failure")

    def poll(self, timeout: float = 1.0) -> None:
        self.config.extra["error_cb"](KafkaError(KafkaError._ALL_BROKERS_DOWN))

    def assignment(self) -> list[object]:
        return []  # the group is never joined


def test_group_consume_of_an_unreachable_broker_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consume_cli, "Consumer", UnreachableConsumer)
    monkeypatch.setattr(consume_cli, "JOIN_GRACE_S", 0.0)
    args = ["consume", "t", "-g", "g", "--idle-timeout", "0", "-b", "127.0.0.1:1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert "_TRANSPORT" in r.stderr and "hint: could not talk to the broker" in r.stderr
    assert UnreachableConsumer.last.subscribed is None
