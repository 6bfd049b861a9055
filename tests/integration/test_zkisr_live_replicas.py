"""The ISR of topics written by Kafka's ZooKeeper tools, and ISR or replica changes while a
partition is open, as Kafka's ZooKeeper-mode controller and brokers have them.

A topic written with only its assignment (``kafka-topics --zookeeper`` writes no partition
state) is completed by the controller as PartitionStateMachine.initializeLeaderAndIsrForPartitions
does: the ISR is the live replicas only, led by the first of them; a partition with no live
replica gets no state until one registers. Before, the ISR named every assigned replica, so
acks=all with ``min.insync.replicas=2`` was acknowledged with broker 1 absent: one copy only.

A hosted partition takes a later ISR or replica set written in its state znode or assignment
(as Partition.makeLeader takes a LeaderAndIsr): acks=all and the under-min-ISR gauge follow it.
Before, only a higher leader epoch was taken until the partition was opened again.

Real ZooKeeper, a real broker (``zookeeper.connect``), confluent-kafka, kazoo as the other tool.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient
from kazoo.client import KazooClient

from tests.integration.absent_replica import send
from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import BrokerInfo

pytestmark = pytest.mark.integration
MIN_ISR_2 = {"min.insync.replicas": "2"}


class Cluster:
    """Broker 0 (the controller) on its own chroot, its metrics port, and a kazoo client."""

    def __init__(self, broker: BrokerProcess, zk: KazooClient, metrics_port: int) -> None:
        self.broker = broker
        self.zk = zk
        self.metrics_port = metrics_port

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    port = free_port()
    args = ["--config", f"zookeeper.connect={connect}", "--metrics-port", str(port)]
    data_dir = tmp_path_factory.mktemp("zkisr") / "data"
    broker = BrokerProcess(data_dir, extra_args=args).start()
    zk = kazoo_client(connect)
    try:
        yield Cluster(broker, zk, port)
    finally:
        zk.stop()
        zk.close()
        broker.stop()


def write_topic(zk: KazooClient, name: str, assignment: dict[int, list[int]]) -> None:
    """What ``kafka-topics --zookeeper --create`` writes: the config znode, then the topic's
    assignment, and no partition state (the controller writes those)."""
    config = json.dumps({"version": 1, "config": MIN_ISR_2}).encode()
    zk.create(znodes.topic_config(name), config, makepath=True)
    partitions = {str(p): r for p, r in assignment.items()}
    zk.create(znodes.topic(name), json.dumps({"version": 2, "partitions": partitions}).encode())


def read_state(zk: KazooClient, name: str, p: int) -> dict[str, Any] | None:
    path = znodes.partition_state(name, p)
    if zk.exists(path) is None:
        return None
    state: dict[str, Any] = json.loads(zk.get(path)[0])
    return state


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.2)


def metadata_of(bootstrap: str, name: str, p: int) -> tuple[int, list[int], list[int]] | None:
    """(leader, replicas, ISR) of partition ``p`` as Metadata answers it (None: not there)."""
    topic = AdminClient({"bootstrap.servers": bootstrap}).list_topics(name, timeout=10)
    meta = topic.topics.get(name)
    part = None if meta is None or meta.error is not None else meta.partitions.get(p)
    return None if part is None else (part.leader, part.replicas, part.isrs)


def refused(bootstrap: str, topic: str) -> bool:
    """acks=all is answered NOT_ENOUGH_REPLICAS (True) or taken (False); anything else fails."""
    error = send(bootstrap, topic, "all")
    assert error is None or error.code() == KafkaError.NOT_ENOUGH_REPLICAS, error
    return error is not None


def under_min_isr(port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name == "tiered_mq_under_min_isr_partitions":
            return float(value)
    raise AssertionError("no tiered_mq_under_min_isr_partitions gauge")


def test_a_tool_written_topic_has_only_its_live_replicas_in_sync(cluster: Cluster) -> None:
    write_topic(cluster.zk, "tool-written", {0: [0, 1], 1: [1, 0]})
    states = wait_for(
        "partition states",
        lambda: all(s := [read_state(cluster.zk, "tool-written", p) for p in (0, 1)]) and s,
    )
    assert [(s["leader"], s["isr"], s["leader_epoch"]) for s in states] == [
        (0, [0], 0),
        (0, [0], 0),  # broker 1 is not live: the first live replica leads
    ]
    assert wait_for("metadata", lambda: metadata_of(cluster.bootstrap, "tool-written", 0)) == (
        0,
        [0, 1],
        [0],
    )
    wait_for("hosting", lambda: send(cluster.bootstrap, "tool-written", "1") is None)
    assert refused(cluster.bootstrap, "tool-written")  # one copy, min.insync.replicas=2


def test_a_partition_with_no_live_replica_waits_for_one(cluster: Cluster) -> None:
    write_topic(cluster.zk, "absent", {0: [0], 1: [7]})
    wait_for("partition 0's state", lambda: read_state(cluster.zk, "absent", 0))
    time.sleep(1)  # the controller has looked at partition 1 too
    assert read_state(cluster.zk, "absent", 1) is None
    path = znodes.broker(7)  # broker 7 registers (this client's session stands for it)
    info = BrokerInfo(7, "127.0.0.1", free_port())
    cluster.zk.create(path, znodes.encode_broker(info), ephemeral=True)
    try:
        state = wait_for("partition 1's state", lambda: read_state(cluster.zk, "absent", 1))
        assert (state["leader"], state["isr"]) == (7, [7])
    finally:
        cluster.zk.delete(path)


def test_an_isr_change_by_another_tool_is_taken_while_open(cluster: Cluster) -> None:
    name = "isr-change"
    others = under_min_isr(cluster.metrics_port)  # the module's other topics' partitions
    state = {"controller_epoch": 1, "leader": 0, "version": 1, "leader_epoch": 0, "isr": [0, 1]}
    txn = cluster.zk.transaction()
    config = json.dumps({"version": 1, "config": MIN_ISR_2}).encode()
    txn.create(znodes.topic_config(name), config)
    txn.create(znodes.topic(name), json.dumps({"version": 2, "partitions": {"0": [0, 1]}}).encode())
    txn.create(znodes.partitions(name), b"")
    txn.create(znodes.partition(name, 0), b"")
    txn.create(znodes.partition_state(name, 0), json.dumps(state).encode())
    assert not [r for r in txn.commit() if isinstance(r, Exception)]
    wait_for("hosting", lambda: send(cluster.bootstrap, name, "all") is None)
    assert under_min_isr(cluster.metrics_port) == others

    def write_isr(isr: list[int]) -> None:  # a shrink or expansion: same leader epoch
        cluster.zk.set(znodes.partition_state(name, 0), json.dumps({**state, "isr": isr}).encode())

    write_isr([0])
    wait_for("the shrunk ISR", lambda: metadata_of(cluster.bootstrap, name, 0) == (0, [0, 1], [0]))
    wait_for("acks=all refused", lambda: refused(cluster.bootstrap, name))
    assert under_min_isr(cluster.metrics_port) == others + 1
    write_isr([0, 1])
    wait_for("acks=all taken", lambda: not refused(cluster.bootstrap, name))
    assert under_min_isr(cluster.metrics_port) == others


def test_a_reassignment_by_another_tool_is_taken_while_open(cluster: Cluster) -> None:
    """Replicas [0, 1] with ISR [0] refuse acks=all; reassigned to [0] alone (the assignment
    and the state rewritten, as kafka-reassign-partitions and the controller leave it),
    min.insync.replicas=2 is capped at one replica and acks=all is taken."""
    name = "reassigned"
    state = {"controller_epoch": 1, "leader": 0, "version": 1, "leader_epoch": 0, "isr": [0]}
    txn = cluster.zk.transaction()
    config = json.dumps({"version": 1, "config": MIN_ISR_2}).encode()
    txn.create(znodes.topic_config(name), config)
    txn.create(znodes.topic(name), json.dumps({"version": 2, "partitions": {"0": [0, 1]}}).encode())
    txn.create(znodes.partitions(name), b"")
    txn.create(znodes.partition(name, 0), b"")
    txn.create(znodes.partition_state(name, 0), json.dumps(state).encode())
    assert not [r for r in txn.commit() if isinstance(r, Exception)]
    wait_for("hosting", lambda: send(cluster.bootstrap, name, "1") is None)
    assert refused(cluster.bootstrap, name)
    data, _ = cluster.zk.get(znodes.topic(name))
    topic = json.loads(data)
    topic["partitions"] = {"0": [0]}
    cluster.zk.set(znodes.topic(name), json.dumps(topic).encode())
    wait_for("the new replicas", lambda: metadata_of(cluster.bootstrap, name, 0) == (0, [0], [0]))
    wait_for("acks=all taken", lambda: not refused(cluster.bootstrap, name))
