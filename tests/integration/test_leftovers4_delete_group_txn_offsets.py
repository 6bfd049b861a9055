"""DeleteGroups removes a group's pending transactional offsets too (Kafka's
OffsetMetadataManager.deleteAllOffsets tombstones them): when the transaction that sent them
commits afterwards, none of the deleted group's offsets appear, neither at once nor after a
restart (the tombstones replayed on load drop them again). Before, the COMMIT marker
materialized them into the deleted group."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

TIMEOUT = 20
OFFSET_INVALID = -1001  # librdkafka: no committed offset


def _consumer(bootstrap: str, group: str) -> Consumer:
    """A read_committed consumer: its OffsetFetch (require_stable) waits out pending offsets."""
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )


def _committed(bootstrap: str, group: str, topic: str) -> list[tuple[int, int]]:
    consumer = _consumer(bootstrap, group)
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in (0, 1)], TIMEOUT)
        return [(tp.partition, tp.offset) for tp in tps]
    finally:
        consumer.close()


def _listed(admin: AdminClient, group: str) -> list[Any]:
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
    return list(result[group].result(TIMEOUT).topic_partitions)


def test_a_deleted_groups_transactional_offsets_do_not_come_back(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic, group = f"dg-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(TIMEOUT)

    member = _consumer(broker.bootstrap, group)  # never subscribes: the group stays Empty
    member.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "transactional.id": f"t-{uuid.uuid4().hex[:6]}"}
    )
    producer.init_transactions(TIMEOUT)
    producer.begin_transaction()
    producer.produce(topic, b"in the transaction", partition=0)
    # partition 0 has a committed offset too; partition 1 only the pending one
    pending = [TopicPartition(topic, 0, 20), TopicPartition(topic, 1, 7)]
    producer.send_offsets_to_transaction(pending, member.consumer_group_metadata(), TIMEOUT)
    member.close()

    admin.delete_consumer_groups([group])[group].result(TIMEOUT)
    producer.commit_transaction(TIMEOUT)

    gone = [(0, OFFSET_INVALID), (1, OFFSET_INVALID)]
    assert _committed(broker.bootstrap, group, topic) == gone  # not 20 and 7
    assert _listed(admin, group) == []

    broker.restart()  # the log replayed: tombstones after the offsets, then the COMMIT marker
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert _committed(broker.bootstrap, group, topic) == gone
    assert _listed(admin, group) == []
