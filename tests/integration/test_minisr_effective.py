"""``min.insync.replicas`` as Kafka 3.7+ applies it (Partition.effectiveMinIsr, KAFKA-15583):
capped at the partition's replica count. A one-replica topic with ``min.insync.replicas=2``
takes acks=all writes (this broker answered NOT_ENOUGH_REPLICAS, and confluent-kafka timed out
with _MSG_TIMED_OUT) and is not under min ISR; a partition of replicas [0, 1] whose ISR is [0]
still refuses them and is counted under min ISR (and under-replicated) on /metrics, until the
topic is deleted. Real clients (confluent-kafka), real brokers, a real ZooKeeper."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.absent_replica import (  # noqa: F401  (the fixture)
    DEAF,
    deaf_broker,
    send,
    start_with_absent_replica,
)
from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.zookeeper_server import ZooKeeperServer, zookeeper  # noqa: F401

pytestmark = pytest.mark.integration


def create(bootstrap: str, topic: str, partitions: int = 1, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(15)


def scrape(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples = (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
    return {name: float(value) for name, _, value in samples if name}


def test_a_one_replica_topic_with_min_insync_replicas_2_takes_acks_all(
    shared_broker: BrokerProcess,
) -> None:
    create(shared_broker.bootstrap, "one-replica", **{"min.insync.replicas": "2"})
    assert send(shared_broker.bootstrap, "one-replica", "all") is None
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "minisr"})
    try:
        consumer.assign([TopicPartition("one-replica", 0, 0)])
        got = consumer.consume(1, timeout=10)
    finally:
        consumer.close()
    assert [m.value() for m in got] == [b"v"]


def test_a_replica_out_of_the_isr_still_refuses_acks_all(
    deaf_broker: BrokerProcess,  # noqa: F811
) -> None:
    error = send(deaf_broker.bootstrap, DEAF, "all")
    assert error is not None and error.code() == KafkaError.NOT_ENOUGH_REPLICAS, error
    assert send(deaf_broker.bootstrap, DEAF, "1") is None


def test_under_min_isr_counts_the_effective_min_isr(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    port = free_port()
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    broker = start_with_absent_replica(
        tmp_path / "data", connect, "short", extra_args=["--metrics-port", str(port)]
    )
    try:
        create(broker.bootstrap, "one-replica", 2, **{"min.insync.replicas": "2"})
        samples = scrape(port)
        assert samples["tiered_mq_under_min_isr_partitions"] == 1  # short-0, not one-replica
        assert samples["tiered_mq_under_replicated_partitions"] == 1
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.delete_topics(["short"])["short"].result(15)
        samples = scrape(port)
        assert samples["tiered_mq_under_min_isr_partitions"] == 0
        assert samples["tiered_mq_under_replicated_partitions"] == 0
    finally:
        broker.stop()
