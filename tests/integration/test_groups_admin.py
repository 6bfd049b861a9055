"""Group admin APIs through confluent-kafka's AdminClient: ListGroups (each group's state and
type, filtered by state and type; kafka-python's listing too), DescribeGroups (members and
their assignments), DeleteGroups (refused while members remain, then offsets are gone), and
the committed offsets as ``list_consumer_group_offsets`` sees them."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from tests.integration.broker_process import BrokerProcess, request
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


def active_member(bootstrap: str, topic: str, group: str) -> Consumer:
    """A consumer of ``group`` that holds its assignment: the group is Stable."""
    consumer = group_consumer(bootstrap, group)
    consumer.subscribe([topic])
    deadline = time.monotonic() + 20
    while not consumer.assignment():
        assert time.monotonic() < deadline
        consumer.poll(0.1)
    return consumer


def committed_only(bootstrap: str, topic: str, group: str) -> None:
    """A group with offsets committed outside any generation: Empty, with no members."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    finally:
        consumer.close()


def listing(admin: AdminClient, **filters: object) -> dict[str, tuple[object, object]]:
    """``list_consumer_groups``: each group's (state, type)."""
    result = admin.list_consumer_groups(request_timeout=15, **filters).result(15)
    assert result.errors == []
    return {g.group_id: (g.state, g.type) for g in result.valid}


STABLE, EMPTY = ConsumerGroupState.STABLE, ConsumerGroupState.EMPTY
CLASSIC = ConsumerGroupType.CLASSIC


def test_list_groups_states_and_filters(broker: BrokerProcess) -> None:
    """ListGroups v4/v5 as librdkafka uses them: the state and type of each group, and the
    states and types filters (a Stable group becomes Empty when its member leaves)."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    create_topic(broker.bootstrap, "states", 1)
    consumer = active_member(broker.bootstrap, "states", "gs-active")
    committed_only(broker.bootstrap, "states", "gs-idle")
    try:
        both = {"gs-active": (STABLE, CLASSIC), "gs-idle": (EMPTY, CLASSIC)}
        assert listing(admin) == both
        assert listing(admin, states={STABLE}) == {"gs-active": (STABLE, CLASSIC)}
        assert listing(admin, states={EMPTY}) == {"gs-idle": (EMPTY, CLASSIC)}
        assert listing(admin, states={STABLE, EMPTY}) == both
        assert listing(admin, states={ConsumerGroupState.PREPARING_REBALANCING}) == {}
        # every group here is a classic one: KIP-848's consumer groups are not served
        assert listing(admin, types={ConsumerGroupType.CONSUMER}) == {}
        assert listing(admin, types={CLASSIC}) == both
        assert listing(admin, states={STABLE}, types={CLASSIC}) == {"gs-active": (STABLE, CLASSIC)}
    finally:
        consumer.close()  # LeaveGroup: its only member gone, the group is Empty
    deadline = time.monotonic() + 10
    while listing(admin)["gs-active"][0] != EMPTY:
        assert time.monotonic() < deadline, listing(admin)
        time.sleep(0.1)
    assert listing(admin) == {"gs-active": (EMPTY, CLASSIC), "gs-idle": (EMPTY, CLASSIC)}
    assert listing(admin, states={STABLE}) == {}


def test_list_groups_through_kafka_python(broker: BrokerProcess) -> None:
    """kafka-python's KafkaAdminClient lists groups (3.x: ``list_groups``, with states and
    filters; 2.x: ``list_consumer_groups``, group ids and protocol types)."""
    create_topic(broker.bootstrap, "kp-states", 1)
    consumer = active_member(broker.bootstrap, "kp-states", "kp-active")
    committed_only(broker.bootstrap, "kp-states", "kp-idle")
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=15_000)
    try:
        if not hasattr(admin, "list_groups"):  # kafka-python 2.x
            listed = admin.list_consumer_groups()
            assert sorted(listed) == [("kp-active", "consumer"), ("kp-idle", "")]
            return
        groups = {g["group_id"]: g for g in admin.list_groups()}
        assert {k: (g["protocol_type"], g["group_state"]) for k, g in groups.items()} == {
            "kp-active": ("consumer", "Stable"),
            "kp-idle": ("", "Empty"),
        }
        assert {g["group_type"] for g in groups.values()} == {"classic"}
        stable = admin.list_groups(states_filter=["Stable"])
        assert [g["group_id"] for g in stable] == ["kp-active"]
        assert admin.list_groups(types_filter=["consumer"]) == []
    finally:
        admin.close()
        consumer.close()


def test_wire_level_answers(broker: BrokerProcess) -> None:
    """FindCoordinator v0-2, OffsetCommit of unknown topics, OffsetFetch of everything (v2+)."""
    create_topic(broker.bootstrap, "wire", 2)
    for version in (0, 1, 2):
        found = request(broker.port, 10, version, {"key": "g", "key_type": 0})
        assert (found["error_code"], found["node_id"], found["port"]) == (0, 0, broker.port)
    assert request(broker.port, 10, 1, {"key": "tx", "key_type": 1})["port"] == broker.port
    assert request(broker.port, 10, 1, {"key": "g", "key_type": 7})["error_code"] == 42

    commit = {
        "group_id": "wire-group",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "retention_time_ms": -1,
        "topics": [
            {"name": "wire", "partitions": [_part(0, 11), _part(1, 12), _part(5, 1)]},
            {"name": "missing", "partitions": [_part(0, 1)]},
        ],
    }
    answer = request(broker.port, 8, 2, commit)
    codes = {
        (t["name"], p["partition_index"]): p["error_code"]
        for t in answer["topics"]
        for p in t["partitions"]
    }
    assert codes == {("wire", 0): 0, ("wire", 1): 0, ("wire", 5): 3, ("missing", 0): 3}

    for version in (2, 5):
        fetched = request(broker.port, 9, version, {"group_id": "wire-group", "topics": None})
        got = {
            (t["name"], p["partition_index"]): p["committed_offset"]
            for t in fetched["topics"]
            for p in t["partitions"]
        }
        assert got == {("wire", 0): 11, ("wire", 1): 12}
    one = request(
        broker.port,
        9,
        1,
        {"group_id": "wire-group", "topics": [{"name": "wire", "partition_indexes": [1, 0, 9]}]},
    )
    assert [
        (p["partition_index"], p["committed_offset"]) for p in one["topics"][0]["partitions"]
    ] == [(1, 12), (0, 11), (9, -1)]


def _part(index: int, offset: int) -> dict[str, object]:
    return {"partition_index": index, "committed_offset": offset, "committed_metadata": None}
