"""A partition with no state (ZooKeeper mode) is unknown to clients, as Kafka answers it.

A topic written by Kafka's tools whose partition's replicas are none of them registered gets
no partition state (the controller elects no leader), so Kafka's controller never sends it in
UpdateMetadata: the metadata cache does not hold it. Metadata leaves the partition out of its
topic, a topic with no partition in that state is answered as unknown, and Produce, Fetch and
ListOffsets answer UNKNOWN_TOPIC_OR_PARTITION (ReplicaManager.getPartitionOrError of a partition
neither hosted nor cached). Before, Metadata answered such a partition led by this broker alone
(replicas and ISR [0]) and a restart hosted it: records were taken on a broker that is not one
of its replicas.

Real ZooKeeper, a real broker (``zookeeper.connect``), confluent-kafka and kafka-python as the
clients, raw requests for the broker's per-partition answers, kazoo as the other tool.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)
from tiered_mq.coordination import znodes
from tiered_mq.errors import UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration
ABSENT = 7
"""A broker id that never registers."""
UNKNOWN = UnknownTopicOrPartitionError.errno


class Cluster:
    def __init__(self, broker: BrokerProcess, zk: KazooClient) -> None:
        self.broker = broker
        self.zk = zk

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    @property
    def port(self) -> int:
        return int(self.bootstrap.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    data_dir: Path = tmp_path_factory.mktemp("zkmeta") / "data"
    broker = BrokerProcess(data_dir, extra_args=["--config", f"zookeeper.connect={connect}"])
    broker.start()
    zk = kazoo_client(connect)
    try:
        yield Cluster(broker, zk)
    finally:
        zk.stop()
        zk.close()
        broker.stop()


def write_topic(zk: KazooClient, name: str, assignment: dict[int, list[int]]) -> None:
    """What ``kafka-topics --zookeeper --create`` writes: config, assignment, no state."""
    zk.create(znodes.topic_config(name), json.dumps({"version": 1, "config": {}}).encode())
    partitions = {str(p): r for p, r in assignment.items()}
    zk.create(znodes.topic(name), json.dumps({"version": 2, "partitions": partitions}).encode())


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.2)
    return got


def state_written(zk: KazooClient, name: str, p: int) -> bool:
    return zk.exists(znodes.partition_state(name, p)) is not None


def listed(bootstrap: str, name: str, auto_create: bool = True) -> Any:
    """confluent-kafka's view of topic ``name`` (its TopicMetadata); ``auto_create``: the
    request allows auto-creation (librdkafka's default for an admin client or a producer)."""
    conf = {"bootstrap.servers": bootstrap, "allow.auto.create.topics": auto_create}
    return AdminClient(conf).list_topics(name, timeout=10).topics[name]


def deliver(
    bootstrap: str, topic: str, partition: int, timeout_ms: int = 3000
) -> KafkaError | None:
    """One record to ``partition``: its delivery report's error (None: delivered)."""
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": timeout_ms})
    reports: list[KafkaError | None] = []

    def on_delivery(error: KafkaError | None, _: Message) -> None:
        reports.append(error)

    producer.produce(topic, b"v", partition=partition, on_delivery=on_delivery)
    assert producer.flush(timeout_ms / 1000 + 10) == 0
    assert len(reports) == 1
    return reports[0]


def raw_answers(port: int, topic: str, p: int) -> dict[str, int]:
    """The error codes of Produce (acks=1), Fetch and ListOffsets for partition ``p``."""
    batch = encode_batch([(None, b"raw", None, None)])
    produce = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": p, "records": batch}]}],
    }
    produced = request(port, ApiKey.PRODUCE, 8, produce)["responses"][0]
    fetch = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    fetched = request(port, ApiKey.FETCH, 11, fetch)["responses"][0]["partitions"][0]
    part = {"partition_index": p, "timestamp": -1, "current_leader_epoch": -1}
    offsets = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [part]}],
    }
    listed_ = request(port, ApiKey.LIST_OFFSETS, 5, offsets)["topics"][0]["partitions"][0]
    return {
        "produce": produced["partition_responses"][0]["error_code"],
        "fetch": fetched["error_code"],
        "list_offsets": listed_["error_code"],
    }


def test_a_partition_with_no_state_is_left_out_and_refused(cluster: Cluster) -> None:
    name = "half-stated"
    write_topic(cluster.zk, name, {0: [0], 1: [ABSENT]})
    wait_for("partition 0's state", lambda: state_written(cluster.zk, name, 0))
    wait_for("partition 0 led", lambda: listed(cluster.bootstrap, name).partitions.get(0))
    topic = listed(cluster.bootstrap, name)
    assert topic.error is None
    assert sorted(topic.partitions) == [0]  # as Kafka's metadata cache: partition 1 unknown
    p0 = topic.partitions[0]
    assert (p0.leader, p0.replicas, p0.isrs) == (0, [0], [0])
    assert not state_written(cluster.zk, name, 1)
    # librdkafka counts one partition: a record for partition 1 fails, partition 0 is written
    error = deliver(cluster.bootstrap, name, 1)
    assert error is not None and error.code() == KafkaError._UNKNOWN_PARTITION, error
    assert deliver(cluster.bootstrap, name, 0) is None
    # kafka-python sees one partition too
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap)
    try:
        assert consumer.partitions_for_topic(name) == {0}
    finally:
        consumer.close()
    # a client sending to it anyway: the broker neither hosts nor knows it
    assert raw_answers(cluster.port, name, 1) == {
        "produce": UNKNOWN,
        "fetch": UNKNOWN,
        "list_offsets": UNKNOWN,
    }
    assert set(raw_answers(cluster.port, name, 0).values()) == {0}


def test_a_topic_with_no_stated_partition_is_unknown(cluster: Cluster) -> None:
    name = "unstated"
    write_topic(cluster.zk, name, {0: [ABSENT]})
    wait_for("the controller's look", lambda: listed(cluster.bootstrap, "half-stated"))
    time.sleep(1)  # the controller has looked at the new topic
    assert not state_written(cluster.zk, name, 0)
    # a request without auto-creation: unknown, as a topic that does not exist
    topic = listed(cluster.bootstrap, name, auto_create=False)
    assert topic.error is not None and topic.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert not topic.partitions
    # with it: LEADER_NOT_AVAILABLE (Kafka's auto-creation finds the topic in ZooKeeper)
    topic = listed(cluster.bootstrap, name)
    assert topic.error is not None and topic.error.code() == KafkaError.LEADER_NOT_AVAILABLE
    assert not topic.partitions
    names = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10).topics
    assert name not in names
    # a producer's request allows auto-creation: LEADER_NOT_AVAILABLE, it waits and retries
    # until message.timeout.ms; nothing is written
    error = deliver(cluster.bootstrap, name, 0, timeout_ms=3000)
    assert error is not None and error.code() == KafkaError._MSG_TIMED_OUT, error
    assert set(raw_answers(cluster.port, name, 0).values()) == {UNKNOWN}


def test_a_restart_hosts_no_partition_without_state(cluster: Cluster) -> None:
    """Its log directory made by an earlier broker or not, a stateless partition is not opened
    at the start: records for it are refused, as before the restart."""
    name = "restarted"
    write_topic(cluster.zk, name, {0: [0], 1: [ABSENT]})
    wait_for("partition 0 led", lambda: listed(cluster.bootstrap, name).partitions.get(0))
    cluster.broker.restart()
    wait_for("partition 0 led again", lambda: deliver(cluster.bootstrap, name, 0) is None)
    assert sorted(listed(cluster.bootstrap, name).partitions) == [0]
    assert set(raw_answers(cluster.port, name, 1).values()) == {UNKNOWN}
    # once broker 7's replica has a state (another controller elected it), partition 1 is
    # known, led elsewhere, and still not hosted here
    state = {"controller_epoch": 1, "leader": ABSENT, "version": 1, "leader_epoch": 0, "isr": [7]}
    cluster.zk.create(znodes.partition_state(name, 1), json.dumps(state).encode(), makepath=True)
    wait_for("partition 1 listed", lambda: 1 in listed(cluster.bootstrap, name).partitions)
    p1 = listed(cluster.bootstrap, name).partitions[1]
    assert (p1.replicas, p1.isrs) == ([ABSENT], [ABSENT])
