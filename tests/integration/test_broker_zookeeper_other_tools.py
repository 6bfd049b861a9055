"""A broker with ``zookeeper.connect`` follows what other tools write in ZooKeeper while it runs,
as Kafka's controller and brokers do: a topic written the way Kafka's ZooKeeper tools write it
(no topic id, no partition states), a topic config changed in its znode, a topic deleted
through ``/admin/delete_topics``, and a topic whose ``/brokers/topics/<t>`` is removed
directly. The other tool is kazoo; the clients are confluent-kafka."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic
from kazoo.client import KazooClient

from tests.integration.test_broker_zookeeper import produce, read_all, zk_broker
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes

pytestmark = pytest.mark.integration


@pytest.fixture
def chroot(zookeeper: ZooKeeperServer) -> str:  # noqa: F811
    return zookeeper.connect_string(zookeeper.new_chroot())


@pytest.fixture
def zk(chroot: str) -> Iterator[KazooClient]:
    client = kazoo_client(chroot)
    yield client
    client.stop()


def wait_for(check: Callable[[], Any], what: str, timeout: float = 15) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return result


def refused(bootstrap: str) -> bool:
    """Whether a 4000-byte record to ``orders`` is refused with MESSAGE_TOO_LARGE."""
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    errors: list[KafkaError | None] = []
    producer.produce("orders", b"y" * 4000, on_delivery=lambda e, m: errors.append(e))
    producer.flush(10)
    return (
        len(errors) == 1
        and errors[0] is not None
        and (errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE)
    )


def test_a_topic_written_by_kafkas_zookeeper_tools_is_completed_and_served(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    with zk_broker(tmp_path / "data", chroot) as broker:
        # what AdminZkClient of Kafka 2.x writes: the config, then the assignment (version 2,
        # no topic id); the controller writes the rest
        config = {"version": 1, "config": {"retention.ms": "86400000"}}
        zk.create(znodes.topic_config("legacy"), json.dumps(config).encode())
        assignment = {"version": 2, "partitions": {"0": [0], "1": [0]}}
        zk.create(znodes.topic("legacy"), json.dumps(assignment).encode())

        def topic_id() -> str | None:
            return json.loads(zk.get(znodes.topic("legacy"))[0]).get("topic_id")

        written = wait_for(topic_id, "the controller to give the topic an id")
        assert len(written) == 22  # Kafka's Uuid.toString
        topic = json.loads(zk.get(znodes.topic("legacy"))[0])
        assert topic["version"] == 3 and topic["partitions"] == {"0": [0], "1": [0]}
        for p in (0, 1):
            path = znodes.partition_state("legacy", p)
            wait_for(lambda path=path: zk.exists(path), path)
            state = json.loads(zk.get(path)[0])
            assert state["leader"] == 0 and state["isr"] == [0] and state["leader_epoch"] == 0

        values = [f"v{i}".encode() for i in range(100)]
        produce(broker.bootstrap, "legacy", values)
        assert sorted(read_all(broker.bootstrap, "legacy", 2, 100)) == sorted(values)


def test_a_topic_config_changed_in_zookeeper_applies_to_the_log(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    with zk_broker(tmp_path / "data", chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("orders", 1, 1)])["orders"].result(20)
        produce(broker.bootstrap, "orders", [b"x" * 4000])
        config = {"version": 1, "config": {"max.message.bytes": "1000"}}
        zk.set(znodes.topic_config("orders"), json.dumps(config).encode())

        wait_for(lambda: refused(broker.bootstrap), "a 4000-byte record to be refused")


def test_a_dynamic_broker_config_changed_in_zookeeper_applies_to_the_logs(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    """What ``kafka-configs.sh --zookeeper --entity-type brokers --entity-default`` writes."""
    with zk_broker(tmp_path / "data", chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("orders", 1, 1)])["orders"].result(20)
        produce(broker.bootstrap, "orders", [b"x" * 4000])
        config = {"version": 1, "config": {"message.max.bytes": "1000"}}
        zk.create(znodes.broker_config("<default>"), json.dumps(config).encode())
        wait_for(lambda: refused(broker.bootstrap), "a 4000-byte record to be refused")
        res = ConfigResource(ConfigResource.Type.BROKER, "0")
        described = admin.describe_configs([res])[res].result(20)["message.max.bytes"]
        assert described.value == "1000"
        assert described.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value


def test_a_topic_deleted_through_admin_delete_topics(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    with zk_broker(tmp_path / "data", chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("doomed", 2, 1)])["doomed"].result(20)
        produce(broker.bootstrap, "doomed", [b"a", b"b", b"c"])
        assert (tmp_path / "data" / "doomed-0").is_dir()

        zk.create("/admin/delete_topics/doomed", makepath=True)  # kafka-topics.sh --delete
        wait_for(lambda: zk.exists("/admin/delete_topics/doomed") is None, "the request to go")
        assert zk.exists(znodes.topic("doomed")) is None
        assert zk.exists(znodes.topic_config("doomed")) is None
        wait_for(lambda: not (tmp_path / "data" / "doomed-0").exists(), "the log to go")
        assert "doomed" not in admin.list_topics(timeout=10).topics
        # a request naming no topic is removed too, as Kafka's controller removes it
        zk.create("/admin/delete_topics/never-was")
        wait_for(lambda: zk.exists("/admin/delete_topics/never-was") is None, "its removal")
        # the name is free again: a new topic of that name starts empty
        admin.create_topics([NewTopic("doomed", 1, 1)])["doomed"].result(20)
        produce(broker.bootstrap, "doomed", [b"new"])
        assert read_all(broker.bootstrap, "doomed", 1, 1) == [b"new"]


def test_a_topic_whose_znode_is_removed_stops_being_served(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    """``/brokers/topics/gone`` removed by another tool, without /admin/delete_topics: the
    broker stops serving the topic and deletes its local logs, as its next start would (stray
    directories). Before, the partitions went on serving until a restart, though Metadata no
    longer listed the topic, and a topic created again under the name got the old records."""
    data = tmp_path / "data"
    with zk_broker(data, chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("gone", 2, 1)])["gone"].result(20)
        admin.create_topics([NewTopic("kept", 1, 1)])["kept"].result(20)
        produce(broker.bootstrap, "gone", [b"a", b"b", b"c"])
        produce(broker.bootstrap, "kept", [b"k"])
        assert (data / "gone-0").is_dir() and (data / "gone-1").is_dir()

        zk.delete(znodes.topic("gone"), recursive=True)  # the other tool
        wait_for(lambda: not list(data.glob("gone-*")), "the logs to go")
        assert "gone" not in admin.list_topics(timeout=10).topics
        assert (data / "kept-0").is_dir()
        assert read_all(broker.bootstrap, "kept", 1, 1) == [b"k"]
        # the name is free: a topic created again under it starts empty
        admin.create_topics([NewTopic("gone", 1, 1)])["gone"].result(20)
        produce(broker.bootstrap, "gone", [b"new"])
        assert read_all(broker.bootstrap, "gone", 1, 1) == [b"new"]


def test_a_topic_znode_emptied_by_another_tool_keeps_its_logs(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    """``/brokers/topics/t`` set to empty data is unreadable, not gone: the broker logs it and
    goes on serving the topic with its records. Before, empty data read as a removed znode, so
    the broker deleted the topic's logs."""
    data = tmp_path / "data"
    with zk_broker(data, chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("emptied", 1, 1)])["emptied"].result(20)
        produce(broker.bootstrap, "emptied", [b"a", b"b"])
        zk.set(znodes.topic("emptied"), b"")  # the other tool
        time.sleep(3)  # the watch fires within milliseconds; give a deletion time to show
        assert (data / "emptied-0").is_dir()
        assert read_all(broker.bootstrap, "emptied", 1, 2) == [b"a", b"b"]
