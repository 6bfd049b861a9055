"""ZooKeeperCoordinator.create_topics / delete_topics against a real ZooKeeper 3.8: every topic
of a batch in Kafka's znode layout, each answered on its own, each created or deleted whole,
and a batch sent while ZooKeeper is down leaving nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from kazoo.client import KazooClient

from tests.integration.test_coordination_zookeeper import Coordinators, eventually
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import NewTopic, TopicMetadata
from tiered_mq.errors import (
    RequestTimedOutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition

pytestmark = pytest.mark.integration


@pytest.fixture
async def coordinators(zookeeper: ZooKeeperServer) -> AsyncIterator[Coordinators]:  # noqa: F811
    cs = Coordinators(zookeeper.connect_string(zookeeper.new_chroot()))
    yield cs
    for c in cs.opened:
        try:
            await c.close()
        except Exception:  # already closed by the test
            pass


def tree(zk: KazooClient, path: str) -> dict[str, bytes]:
    """Every znode under ``path`` (itself included) with its data."""
    out = {path: zk.get(path)[0]}
    for child in zk.get_children(path):
        out.update(tree(zk, f"{path}/{child}"))
    return out


def layout(zk: KazooClient, name: str) -> dict[str, object]:
    """A topic's znodes relative to it, with their data as JSON (topic ids left out)."""
    out: dict[str, object] = {}
    for path, data in tree(zk, znodes.topic(name)).items():
        value = json.loads(data) if data else None
        if isinstance(value, dict):
            value.pop("topic_id", None)
        out[path.removeprefix(znodes.topic(name))] = value
    out["config"] = json.loads(zk.get(znodes.topic_config(name))[0])
    return out


async def test_a_batch_answers_each_topic_in_kafkas_layout(coordinators: Coordinators) -> None:
    c = await coordinators.open(1)
    other = await coordinators.open(2)
    await c.create_topic("old", 1, {}, [[1]])
    single = await c.create_topic("single", 3, {"retention.ms": "5"}, [[1], [2], [1, 2]])
    batch = [NewTopic(f"t{i}", 3, {"retention.ms": "5"}, [[1], [2], [1, 2]]) for i in range(20)]
    results = await c.create_topics([*batch, NewTopic("old", 2, {}, [])])
    assert isinstance(results["old"], TopicAlreadyExistsError)
    for topic in batch:
        meta = results[topic.name]
        assert isinstance(meta, TopicMetadata)
        assert meta == c.get_topic(topic.name)  # read back at once
        state = c.partition_state(TopicPartition(topic.name, 2))
        assert state is not None and state.replicas == (1, 2)
    meta = c.get_topic("old")
    assert meta is not None and meta.partitions == 1

    zk = KazooClient(hosts=coordinators.connect)
    zk.start()
    try:  # the same znodes as a topic created alone, as Kafka lays them out
        assert layout(zk, "t7") == layout(zk, "single")
        assert single.topic_id != results["t7"].topic_id  # type: ignore[union-attr]
    finally:
        zk.stop()
        zk.close()
    await eventually(lambda: all(other.get_topic(t.name) is not None for t in batch))

    gone = await c.delete_topics([*(t.name for t in batch[:10]), "missing"])
    assert isinstance(gone["missing"], UnknownTopicOrPartitionError)
    assert all(gone[t.name] is None for t in batch[:10])
    assert sorted(c.list_topics()) == sorted(["old", "single", *(t.name for t in batch[10:])])
    assert c.partition_state(TopicPartition("t0", 0)) is None
    await eventually(lambda: other.get_topic("t0") is None and other.get_topic("t10") is not None)

    zk = KazooClient(hosts=coordinators.connect)
    zk.start()
    try:
        assert zk.exists(znodes.topic("t0")) is None
        assert zk.exists(znodes.topic_config("t0")) is None
        assert zk.exists(znodes.topic("t10")) is not None
    finally:
        zk.stop()
        zk.close()


async def test_a_batch_while_zookeeper_is_down_leaves_nothing(
    zookeeper: ZooKeeperServer,  # noqa: F811
    coordinators: Coordinators,
) -> None:
    c = await coordinators.open(1)
    await c.create_topic("kept", 1, {}, [])
    zookeeper.stop()
    try:
        with pytest.raises(RequestTimedOutError):
            await c.create_topics([NewTopic(f"t{i}", 2, {}, []) for i in range(5)])
        with pytest.raises(RequestTimedOutError):
            await c.delete_topics(["kept"])
    finally:
        zookeeper.start()
    await eventually(lambda: c.get_topic("kept") is not None)
    zk = KazooClient(hosts=coordinators.connect)
    zk.start()
    try:
        assert zk.get_children(znodes.TOPICS) == ["kept"]
    finally:
        zk.stop()
        zk.close()
    assert c.list_topics() == ["kept"]
