"""``groups list`` shows each group's type as kafka-consumer-groups.sh ``--list --type
--state`` does: the columns GROUP, TYPE, STATE, and the type as the broker's ListGroups (v5)
names it, spelled as Kafka's GroupType prints it (``Classic``). It printed librdkafka's
is_simple_consumer_group as ``consumer``/``simple``, which is no group type of Kafka's."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_cli_commands import ok, run
from tests.integration.test_cli_groups import joined, topic_with
from tests.integration.test_groups_offset_delete import commit

pytestmark = pytest.mark.integration


def test_groups_list_shows_the_group_type_as_kafka_does(
    shared_broker: BrokerProcess, consumers: list[Consumer]
) -> None:
    bootstrap = shared_broker.bootstrap
    suffix = uuid.uuid4().hex[:8]
    topic, member, committer = f"types-{suffix}", f"joined-{suffix}", f"simple-{suffix}"
    topic_with(bootstrap, topic, 3)
    joined(bootstrap, member, topic, consumers)  # a group with a member (JoinGroup/SyncGroup)
    commit(bootstrap, committer, {(topic, 0): 2})  # offsets committed without joining

    lines = ok(run(bootstrap, "groups", "list")).output.splitlines()

    assert lines[0].split() == ["GROUP", "TYPE", "STATE"]
    listed = {cells[0]: cells[1:] for cells in map(str.split, lines[1:])}
    assert listed[member] == ["Classic", "STABLE"]
    assert listed[committer] == ["Classic", "EMPTY"]
