"""Group admin APIs through confluent-kafka's AdminClient: ListGroups, DescribeGroups (members
and their assignments), DeleteGroups (refused while members remain, then offsets are gone),
and the committed offsets as ``list_consumer_group_offsets`` sees them."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_groups_confluent import create_topic, group_consumer

pytestmark = pytest.mark.integration


def test_list_describe_delete_groups(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    create_topic(broker.bootstrap, "adm", 2)
    consumer = group_consumer(broker.bootstrap, "ga")
    consumer.subscribe(["adm"])
    deadline = time.monotonic() + 20
    while len(consumer.assignment()) < 2:
        assert time.monotonic() < deadline
        consumer.poll(0.1)
    consumer.commit(offsets=[TopicPartition("adm", 0, 3)], asynchronous=False)

    listed = admin.list_consumer_groups().result(15)
    assert "ga" in {g.group_id for g in listed.valid}
    described = admin.describe_consumer_groups(["ga", "unknown"])
    group = described["ga"].result(15)
    assert group.state == ConsumerGroupState.STABLE
    assert group.partition_assignor == "range"
    (member,) = group.members
    assert {tp.partition for tp in member.assignment.topic_partitions} == {0, 1}
    assert described["unknown"].result(15).state == ConsumerGroupState.DEAD
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("ga")])
    committed = offsets["ga"].result(15).topic_partitions
    assert [(tp.topic, tp.partition, tp.offset) for tp in committed] == [("adm", 0, 3)]

    with pytest.raises(KafkaException, match=r"NON_EMPTY_GROUP|not empty"):
        admin.delete_consumer_groups(["ga"])["ga"].result(15)
    consumer.close()
    admin.delete_consumer_groups(["ga"])["ga"].result(15)
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("ga")])
    assert offsets["ga"].result(15).topic_partitions == []
    with pytest.raises(KafkaException, match=r"GROUP_ID_NOT_FOUND|does not exist"):
        admin.delete_consumer_groups(["ga"])["ga"].result(15)
