"""ZooKeeperCoordinator against a real ZooKeeper 3.8: the Coordinator contract, watches between
two coordinators, controller failover, producer id blocks under contention, and the faults
(a session expired by ZooKeeper, ZooKeeper down, a crashed broker's registration)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable

import pytest

from tests.integration.broker_process import free_port
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import BrokerInfo, PartitionState
from tiered_mq.coordination.zookeeper import ZooKeeperCoordinator
from tiered_mq.errors import (
    InvalidPartitionsError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition

pytestmark = pytest.mark.integration
SESSION_MS = 2000


class Coordinators:
    """Opens coordinators on one chroot and closes whatever is still open at the end."""

    def __init__(self, connect: str) -> None:
        self.connect = connect
        self.opened: list[ZooKeeperCoordinator] = []

    async def open(self, node_id: int, register: bool = True) -> ZooKeeperCoordinator:
        c = ZooKeeperCoordinator(self.connect, node_id, session_timeout_ms=SESSION_MS)
        await c.start()
        self.opened.append(c)
        if register:
            await c.register_broker(BrokerInfo(node_id, "127.0.0.1", 9000 + node_id))
        return c


@pytest.fixture
async def coordinators(zookeeper: ZooKeeperServer) -> AsyncIterator[Coordinators]:  # noqa: F811
    cs = Coordinators(zookeeper.connect_string(zookeeper.new_chroot()))
    yield cs
    for c in cs.opened:
        try:
            await c.close()
        except Exception:  # already closed by the test
            pass


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_metadata_survives_the_session_in_kafkas_layout(coordinators: Coordinators) -> None:
    c = await coordinators.open(1)
    meta = await c.create_topic("orders", 2, {"segment.bytes": "100000"}, [[1], [1]])
    with pytest.raises(TopicAlreadyExistsError):
        await c.create_topic("orders", 1, {}, [])
    await c.add_partitions("orders", 4, [])
    with pytest.raises(InvalidPartitionsError):
        await c.add_partitions("orders", 3, [])
    await c.set_partition_state(TopicPartition("orders", 1), PartitionState(1, 5, (1,), (1,)))
    with pytest.raises(UnknownTopicOrPartitionError):
        await c.set_topic_configs("missing", {})
    cluster_id = c.cluster_id
    await c.close()

    again = await coordinators.open(1, register=False)
    got = again.get_topic("orders")
    assert got is not None
    assert (got.partitions, got.topic_id) == (4, meta.topic_id)
    assert got.configs == {"segment.bytes": "100000"}
    state = again.partition_state(TopicPartition("orders", 1))
    assert state == PartitionState(1, 5, (1,), (1,))
    assert again.partition_state(TopicPartition("orders", 3)) == PartitionState(1, 0, (1,), (1,))
    assert again.cluster_id == cluster_id and len(cluster_id) == 22
    assert again.brokers() == []  # the registration was ephemeral: gone with the session

    # what zookeeper-shell shows a Kafka operator
    zk = kazoo_client(coordinators.connect)
    try:
        topic = json.loads(zk.get(znodes.topic("orders"))[0])
        assert topic["partitions"] == {"0": [1], "1": [1], "2": [1], "3": [1]}
        assert znodes.uuid_from_kafka(topic["topic_id"]) == meta.topic_id
        config = json.loads(zk.get(znodes.topic_config("orders"))[0])
        assert config == {"version": 1, "config": {"segment.bytes": "100000"}}
        assert json.loads(zk.get(znodes.partition_state("orders", 1))[0])["leader_epoch"] == 5
    finally:
        zk.stop()


async def test_a_second_coordinator_sees_changes_through_watches(
    coordinators: Coordinators,
) -> None:
    a = await coordinators.open(1)
    b = await coordinators.open(2)
    await eventually(lambda: [x.node_id for x in a.brokers()] == [1, 2])
    await a.create_topic("t", 2, {"retention.ms": "1000"}, [[1], [1]])
    await eventually(lambda: (m := b.get_topic("t")) is not None and m.partitions == 2)
    await a.set_topic_configs("t", {"retention.ms": "5"})
    await a.set_partition_state(TopicPartition("t", 0), PartitionState(1, 3, (1,), (1,)))
    await a.add_partitions("t", 3, [[2]])
    await eventually(
        lambda: (m := b.get_topic("t")) is not None and m.configs["retention.ms"] == "5"
    )
    await eventually(
        lambda: b.partition_state(TopicPartition("t", 0)) == PartitionState(1, 3, (1,), (1,))
    )
    await eventually(
        lambda: b.partition_state(TopicPartition("t", 2)) == PartitionState(2, 0, (2,), (2,))
    )
    await b.delete_topic("t")
    assert b.get_topic("t") is None  # its own write: at once
    await eventually(lambda: a.get_topic("t") is None and a.list_topics() == [])
    assert a.partition_state(TopicPartition("t", 0)) is None
    # a topic of the same name again is a new topic (new id, fresh state)
    again = await a.create_topic("t", 1, {}, [[1]])
    await eventually(lambda: (m := b.get_topic("t")) is not None and m.topic_id == again.topic_id)
    await eventually(
        lambda: b.partition_state(TopicPartition("t", 0)) == PartitionState(1, 0, (1,), (1,))
    )


async def test_the_controller_fails_over_when_its_session_ends(coordinators: Coordinators) -> None:
    a = await coordinators.open(1)
    b = await coordinators.open(2)
    assert a.controller_id() == 1
    await eventually(lambda: b.controller_id() == 1)
    zk = kazoo_client(coordinators.connect)
    try:
        epoch = int(zk.get(znodes.CONTROLLER_EPOCH)[0])
        await a.close()
        await eventually(lambda: b.controller_id() == 2)
        assert int(zk.get(znodes.CONTROLLER_EPOCH)[0]) == epoch + 1
        assert json.loads(zk.get(znodes.CONTROLLER)[0])["brokerid"] == 2
    finally:
        zk.stop()


async def test_producer_id_blocks_never_overlap_between_brokers(coordinators: Coordinators) -> None:
    a = await coordinators.open(1)
    b = await coordinators.open(2)
    blocks = await asyncio.gather(
        *(c.allocate_producer_id_block(100) for _ in range(15) for c in (a, b))
    )
    ids = sorted(i for start, end in blocks for i in range(start, end))
    assert ids == list(range(3000))  # 30 blocks of 100: disjoint and with no gap


async def test_an_expired_session_registers_again(coordinators: Coordinators) -> None:
    """ZooKeeper expires the session (another client closes it with its id and password, the
    standard way to cause an expiry); the coordinator registers and takes control again in its
    new session, and writes work."""
    c = await coordinators.open(1)
    zk = kazoo_client(coordinators.connect)
    try:
        owner = zk.exists(znodes.broker(1)).ephemeralOwner
        session_id, password = c._session.client.client_id
        assert owner == session_id
        thief = kazoo_client(coordinators.connect, client_id=(session_id, password))
        thief.stop()  # closes the shared session: ZooKeeper expires it for the coordinator
        thief.close()

        def registered_again() -> bool:
            stat = zk.exists(znodes.broker(1))
            return stat is not None and stat.ephemeralOwner not in (0, owner)

        await eventually(registered_again, timeout=20)
        await eventually(lambda: zk.exists(znodes.CONTROLLER) is not None)
        assert json.loads(zk.get(znodes.CONTROLLER)[0])["brokerid"] == 1
        await c.create_topic("after-expiry", 1, {}, [[1]])
        assert c.get_topic("after-expiry") is not None
    finally:
        zk.stop()


async def test_zookeeper_down_fails_writes_and_serves_reads() -> None:
    server = ZooKeeperServer().start()
    c = ZooKeeperCoordinator(server.connect_string("/down"), 1, session_timeout_ms=10000)
    try:
        await c.start()
        await c.register_broker(BrokerInfo(1, "127.0.0.1", 9001))
        await c.create_topic("kept", 1, {}, [[1]])
        server.stop()  # SIGKILL
        await asyncio.sleep(0.5)
        with pytest.raises(RequestTimedOutError, match="ZooKeeper"):
            await c.create_topic("refused", 1, {}, [[1]])
        assert c.list_topics() == ["kept"]  # the last view
        server.start()
        deadline = time.monotonic() + 20
        while True:  # the session resumes (or a new one replaces it) and writes work again
            try:
                await c.create_topic("later", 1, {}, [[1]])
                break
            except RequestTimedOutError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        assert c.list_topics() == ["kept", "later"]
    finally:
        await c.close()
        server.cleanup()


async def test_unreachable_zookeeper_is_a_clear_start_error() -> None:
    c = ZooKeeperCoordinator(
        f"127.0.0.1:{free_port()}", 1, session_timeout_ms=2000, connection_timeout_ms=1000
    )
    with pytest.raises(RuntimeError, match=r"cannot reach ZooKeeper at 127\.0\.0\.1:\d+"):
        await c.start()


async def test_a_crashed_brokers_registration_is_waited_out(coordinators: Coordinators) -> None:
    """A broker SIGKILLed leaves /brokers/ids/<id> until ZooKeeper expires its session; the
    restarted broker waits for that instead of failing."""
    hosts = coordinators.connect
    script = (
        "import sys, time; from kazoo.client import KazooClient\n"
        f"c = KazooClient(hosts={hosts!r}, timeout={SESSION_MS / 1000}); c.start(10)\n"
        f"c.create({znodes.broker(7)!r}, {znodes.encode_broker(BrokerInfo(7, 'h', 1))!r}, "
        "ephemeral=True, makepath=True)\n"
        "print('registered', flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)  # noqa: ASYNC220
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"registered"
    proc.kill()
    proc.wait()
    started = time.monotonic()
    c = await coordinators.open(7)
    assert time.monotonic() - started >= 0.5  # it did wait for the old session to expire
    assert [b.node_id for b in c.brokers()] == [7]
    with pytest.raises(RuntimeError, match="registered in ZooKeeper by another live broker"):
        await coordinators.open(7)  # a live holder is never waited out


async def test_scram_credentials_live_in_kafkas_user_znodes(coordinators: Coordinators) -> None:
    """AlterUserScramCredentials' store: ``/config/users/<sanitized user>`` with Kafka's JSON,
    other keys of a user's config (client quotas) kept, the znode gone with its last key."""
    a = await coordinators.open(1)
    b = await coordinators.open(2)
    cred = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"
    await a.alter_scram_credentials(
        {"alice": {"SCRAM-SHA-256": cred, "SCRAM-SHA-512": cred}, "a b*é": {"SCRAM-SHA-256": cred}}
    )
    assert a.scram_users() == ["a b*é", "alice"]  # its own write: at once
    await eventually(lambda: b.scram_credentials("a b*é") == {"SCRAM-SHA-256": cred})
    zk = kazoo_client(coordinators.connect)
    try:
        assert sorted(zk.get_children("/config/users")) == ["a%20b%2A%C3%A9", "alice"]
        stored = json.loads(zk.get("/config/users/alice")[0])
        assert stored == {"version": 1, "config": {"SCRAM-SHA-256": cred, "SCRAM-SHA-512": cred}}
        # an operator's quota on the same user survives credential changes
        quota = {**stored["config"], "producer_byte_rate": "1024"}
        zk.set("/config/users/alice", json.dumps({"version": 1, "config": quota}).encode())
        await b.alter_scram_credentials({"alice": {"SCRAM-SHA-512": None}})
        assert json.loads(zk.get("/config/users/alice")[0])["config"] == {
            "SCRAM-SHA-256": cred,
            "producer_byte_rate": "1024",
        }
        await eventually(lambda: a.scram_credentials("alice") == {"SCRAM-SHA-256": cred})
        await a.alter_scram_credentials({"a b*é": {"SCRAM-SHA-256": None}})
        assert zk.exists("/config/users/a%20b%2A%C3%A9") is None
        await eventually(lambda: b.scram_users() == ["alice"])
        # a user written by hand (as kafka-configs.sh --zookeeper did) is seen too
        zk.create(
            "/config/users/bob", b'{"version":1,"config":{"SCRAM-SHA-512":"%s"}}' % cred.encode()
        )
        await eventually(lambda: a.scram_credentials("bob") == {"SCRAM-SHA-512": cred})
    finally:
        zk.stop()


async def test_scram_credentials_survive_the_session(coordinators: Coordinators) -> None:
    cred = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=8192"
    a = await coordinators.open(1)
    await a.alter_scram_credentials({"carol": {"SCRAM-SHA-256": cred}})
    await a.close()
    again = await coordinators.open(1)
    assert again.scram_users() == ["carol"]
    assert again.scram_credentials("carol") == {"SCRAM-SHA-256": cred}
    assert again.scram_credentials("nobody") == {}


async def test_dynamic_broker_configs_live_in_kafkas_broker_znodes(
    coordinators: Coordinators,
) -> None:
    """``/config/brokers/<default>`` and ``/config/brokers/<id>`` with Kafka's JSON, seen by
    another coordinator through its watches and by a new session; empty removes the znode."""
    a = await coordinators.open(1)
    b = await coordinators.open(2)
    await a.set_broker_configs("<default>", {"log.retention.ms": "86400000"})
    await a.set_broker_configs("1", {"message.max.bytes": "2000000"})
    assert a.broker_configs("<default>") == {"log.retention.ms": "86400000"}  # at once
    await eventually(lambda: b.broker_configs("1") == {"message.max.bytes": "2000000"})
    zk = kazoo_client(coordinators.connect)
    try:
        assert json.loads(zk.get("/config/brokers/<default>")[0]) == {
            "version": 1,
            "config": {"log.retention.ms": "86400000"},
        }
        await a.set_broker_configs("1", {})
        assert zk.exists("/config/brokers/1") is None
        await eventually(lambda: b.broker_configs("1") == {})
    finally:
        zk.stop()
    await a.close()
    again = await coordinators.open(1)
    assert again.broker_configs("<default>") == {"log.retention.ms": "86400000"}
