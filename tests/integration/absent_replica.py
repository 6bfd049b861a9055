"""A topic whose acks=all writes one running broker answers but never acknowledges, as Kafka
3.7+ has it: a partition of replicas [0, 1] whose ISR is [0] (broker 1 is not running), with
``min.insync.replicas=2``. Produce with acks=all is NOT_ENOUGH_REPLICAS, which librdkafka
retries until ``message.timeout.ms``; acks=1 is taken.

A one-replica topic with ``min.insync.replicas=2`` no longer makes such a topic: Kafka 3.7+
(KAFKA-15583, Partition.effectiveMinIsr) caps the setting at the replica count and takes the
writes. The topic is written in ZooKeeper (kazoo, one transaction) the way Kafka's ZooKeeper
tools and controller leave it when broker 1 is down at creation: the config znode, the
assignment ``{"0": [0, 1]}`` and partition 0's state (leader 0, ISR [0], only the live
replicas, as Kafka's PartitionStateMachine initializes it). The broker (``zookeeper.connect``)
follows the change and hosts partition 0.

Use from a test module (both fixtures imported: pytest resolves ``zookeeper`` there)::

    from tests.integration.absent_replica import DEAF, deaf_broker  # noqa: F401
    from tests.integration.zookeeper_server import zookeeper  # noqa: F401
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.zookeeper_server import ZooKeeperServer, kazoo_client
from tiered_mq.coordination import znodes

DEAF = "deaf"
"""The topic of :func:`deaf_broker`."""


def write_topic_with_absent_replica(
    zk: KazooClient, name: str, configs: dict[str, str] | None = None
) -> None:
    """Write topic ``name``, one partition of replicas [0, 1] with ISR [0] (``configs``: its
    config overrides, default ``min.insync.replicas=2``), in one ZooKeeper transaction: the
    broker never sees the topic without its partition state."""
    config = {"min.insync.replicas": "2"} if configs is None else configs
    state = {"controller_epoch": 1, "leader": 0, "version": 1, "leader_epoch": 0, "isr": [0]}
    txn = zk.transaction()
    txn.create(znodes.topic_config(name), json.dumps({"version": 1, "config": config}).encode())
    txn.create(znodes.topic(name), json.dumps({"version": 2, "partitions": {"0": [0, 1]}}).encode())
    txn.create(znodes.partitions(name), b"")
    txn.create(znodes.partition(name, 0), b"")
    txn.create(znodes.partition_state(name, 0), json.dumps(state).encode())
    results = txn.commit()
    failed = [r for r in results if isinstance(r, Exception)]
    assert not failed, failed


def wait_hosted(bootstrap: str, name: str, timeout: float = 20) -> None:
    """Until the broker's metadata shows ``name``'s partition 0 led by broker 0, replicas
    [0, 1], ISR [0]."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    while True:
        topic = admin.list_topics(name, timeout=10).topics.get(name)
        p = None if topic is None or topic.error is not None else topic.partitions.get(0)
        if (
            p is not None
            and p.error is None
            and (p.leader, p.replicas, p.isrs)
            == (
                0,
                [0, 1],
                [0],
            )
        ):
            return
        assert time.monotonic() < deadline, f"{name} not hosted: {topic and topic.partitions}"
        time.sleep(0.2)


def start_with_absent_replica(
    data_dir: Path, connect: str, *names: str, extra_args: Sequence[str] = ()
) -> BrokerProcess:
    """Broker 0 on ``connect`` (a ZooKeeper connect string with its chroot), each of ``names``
    written with :func:`write_topic_with_absent_replica` and hosted. Stop it after use."""
    args = ["--config", f"zookeeper.connect={connect}", *extra_args]
    broker = BrokerProcess(data_dir, extra_args=args).start()
    zk = kazoo_client(connect)
    try:
        for name in names:
            write_topic_with_absent_replica(zk, name)
        for name in names:
            wait_hosted(broker.bootstrap, name)
    except BaseException:
        broker.stop()
        raise
    finally:
        zk.stop()
    return broker


@pytest.fixture(scope="module")
def deaf_broker(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrokerProcess]:
    """One broker for the module, with ``zookeeper.connect``, hosting :data:`DEAF` (replicas
    [0, 1], ISR [0], ``min.insync.replicas=2``); other topics are created as usual."""
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    broker = start_with_absent_replica(tmp_path_factory.mktemp("deaf") / "data", connect, DEAF)
    try:
        yield broker
    finally:
        broker.stop()


def send(bootstrap: str, topic: str, acks: str) -> KafkaError | None:
    """One record to partition 0, no retry: the delivery report's error (None: delivered)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "retries": 0,
            "message.timeout.ms": 10_000,
            "allow.auto.create.topics": False,
        }
    )
    reports: list[KafkaError | None] = []

    def on_delivery(error: KafkaError | None, _: Message) -> None:
        reports.append(error)

    producer.produce(topic, b"v", partition=0, on_delivery=on_delivery)
    assert producer.flush(20) == 0
    assert len(reports) == 1
    return reports[0]
