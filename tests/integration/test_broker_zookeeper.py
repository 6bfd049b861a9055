"""A broker with ``zookeeper.connect``: cluster metadata in a real ZooKeeper, driven by
confluent-kafka and kcat, through a broker SIGKILL, a session that ZooKeeper expires while the
broker is stalled (SIGSTOP), and ZooKeeper itself going down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.client_helpers import confluent_round_trip, take
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes

pytestmark = pytest.mark.integration
SESSION_MS = 3000


def zk_broker(data_dir: Path, connect: str, broker_id: int = 0) -> BrokerProcess:
    return BrokerProcess(
        data_dir,
        extra_args=[
            "--config",
            f"zookeeper.connect={connect}",
            "--config",
            f"zookeeper.session.timeout.ms={SESSION_MS}",
            "--config",
            f"broker.id={broker_id}",
        ],
    )


@pytest.fixture
def chroot(zookeeper: ZooKeeperServer) -> str:  # noqa: F811
    return zookeeper.connect_string(zookeeper.new_chroot())


@pytest.fixture
def zk(chroot: str) -> Iterator[KazooClient]:
    """A client of the broker's chroot."""
    client = kazoo_client(chroot)
    yield client
    client.stop()


def wait_registered_again(zk: KazooClient, old_owner: int, timeout: float = 20) -> None:
    """Until /brokers/ids/0 is there again, owned by a session other than ``old_owner``."""
    deadline = time.monotonic() + timeout
    while (stat := zk.exists(znodes.broker(0))) is None or stat.ephemeralOwner == old_owner:
        assert time.monotonic() < deadline, "the broker did not register in a new session"
        time.sleep(0.2)


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for v in values:
        producer.produce(topic, value=v)
    assert producer.flush(30) == 0


def read_all(bootstrap: str, topic: str, partitions: int, n: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    try:
        return [m.value() or b"" for m in take(consumer, n)]
    finally:
        consumer.close()


def test_metadata_lives_in_zookeeper_across_a_broker_sigkill(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    values = [f"v{i}".encode() for i in range(300)]
    with zk_broker(tmp_path / "data", chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic = NewTopic("orders", 3, 1, config={"retention.ms": "86400000"})
        admin.create_topics([topic])["orders"].result(20)
        produce(broker.bootstrap, "orders", values)
        cluster_id = admin.list_topics(timeout=10).cluster_id

        # what a Kafka operator finds in ZooKeeper
        assert json.loads(zk.get(znodes.broker(0))[0])["port"] == broker.port
        assert sorted(json.loads(zk.get(znodes.topic("orders"))[0])["partitions"]) == [
            "0",
            "1",
            "2",
        ]
        config = json.loads(zk.get(znodes.topic_config("orders"))[0])["config"]
        assert config == {"retention.ms": "86400000"}
        assert cluster_id == znodes.decode_cluster_id(zk.get(znodes.CLUSTER_ID)[0])
        assert json.loads(zk.get(znodes.CONTROLLER)[0])["brokerid"] == 0

        owner = zk.exists(znodes.broker(0)).ephemeralOwner
        broker.kill()  # its registration stays until ZooKeeper expires the session
        broker.start()  # serves at once; registers once the old session has expired
        wait_registered_again(zk, owner)
        assert sorted(read_all(broker.bootstrap, "orders", 3, 300)) == sorted(values)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        res = ConfigResource(ConfigResource.Type.TOPIC, "orders")
        described = admin.describe_configs([res])[res].result(20)
        assert described["retention.ms"].value == "86400000"
        assert admin.list_topics(timeout=10).cluster_id == cluster_id
        # consumer groups and their commits work as on the embedded coordinator
        confluent_round_trip({"bootstrap.servers": broker.bootstrap}, "grouped", 200, 2)


def test_a_second_broker_in_the_same_chroot_is_refused(tmp_path: Path, chroot: str) -> None:
    with zk_broker(tmp_path / "first", chroot) as first:
        second = zk_broker(tmp_path / "second", chroot, broker_id=1)
        with pytest.raises(RuntimeError, match="exited"):
            second.start()
        assert "a cluster has one broker until replication is built" in second.log_tail()
        assert first.running
        produce(first.bootstrap, "still-served", [b"x"])


def test_unreachable_zookeeper_is_a_clear_start_error(tmp_path: Path) -> None:
    broker = BrokerProcess(
        tmp_path / "data",
        extra_args=[
            "--config",
            f"zookeeper.connect=127.0.0.1:{free_port()}",
            "--config",
            "zookeeper.connection.timeout.ms=1000",
        ],
    )
    with pytest.raises(RuntimeError, match="exited"):
        broker.start()
    assert "cannot reach ZooKeeper at 127.0.0.1:" in broker.log_tail()


def test_a_session_expired_during_a_stall_is_registered_again(
    tmp_path: Path, chroot: str, zk: KazooClient
) -> None:
    """SIGSTOP the broker for three session timeouts (as a long GC pause or a frozen VM would):
    ZooKeeper expires its session and drops its registration; after SIGCONT the broker
    registers again in a new session and keeps serving."""
    with zk_broker(tmp_path / "data", chroot) as broker:
        produce(broker.bootstrap, "before", [b"a", b"b"])
        owner = zk.exists(znodes.broker(0)).ephemeralOwner
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 6 * SESSION_MS / 1000
            while zk.exists(znodes.broker(0)) is not None:  # expired by ZooKeeper
                assert time.monotonic() < deadline, "the stalled broker's session never expired"
                time.sleep(0.2)
        finally:
            os.kill(broker.proc.pid, signal.SIGCONT)
        wait_registered_again(zk, owner)
        deadline = time.monotonic() + 10  # the election follows the registration
        while zk.exists(znodes.CONTROLLER) is None:
            assert time.monotonic() < deadline, "no controller after the new session"
            time.sleep(0.1)
        assert json.loads(zk.get(znodes.CONTROLLER)[0])["brokerid"] == 0
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("after", 1, 1)])["after"].result(20)
        produce(broker.bootstrap, "before", [b"c"])
        assert read_all(broker.bootstrap, "before", 1, 3) == [b"a", b"b", b"c"]


def test_zookeeper_down_keeps_the_data_path(tmp_path: Path) -> None:
    """Produce and fetch need no ZooKeeper; topic changes answer REQUEST_TIMED_OUT until it is
    back. kcat reads what was produced meanwhile."""
    server = ZooKeeperServer().start()
    broker = zk_broker(tmp_path / "data", server.connect_string("/down"))
    try:
        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("kept", 1, 1)])["kept"].result(20)
        server.stop()  # SIGKILL
        produce(broker.bootstrap, "kept", [b"during-1", b"during-2"])
        with pytest.raises(KafkaException) as refused:
            admin.create_topics([NewTopic("refused", 1, 1)])["refused"].result(20)
        assert refused.value.args[0].name() == "REQUEST_TIMED_OUT"
        out = subprocess.run(
            ["kcat", "-C", "-b", broker.bootstrap, "-t", "kept", "-o", "beginning", "-e", "-q"],
            capture_output=True,
            timeout=30,
            check=True,
        )
        assert out.stdout.split() == [b"during-1", b"during-2"]
        server.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                admin.create_topics([NewTopic("later", 1, 1)])["later"].result(20)
                break
            except KafkaException as e:
                assert e.args[0].name() == "REQUEST_TIMED_OUT"
                assert time.monotonic() < deadline, "topic changes did not come back"
                time.sleep(0.5)
        assert "later" in admin.list_topics(timeout=10).topics
    finally:
        broker.stop()
        server.cleanup()
