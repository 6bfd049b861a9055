"""The /metrics endpoint of a broker process driven by confluent-kafka, read as an operator
reads it: error codes by API (Kafka's ErrorsPerSec), traffic by topic (BytesInPerSec,
MessagesInPerSec, BytesOutPerSec), partition counts (UnderMinIsrPartitionCount,
OfflinePartitionsCount), and the series of a deleted topic gone."""

from __future__ import annotations

import urllib.request

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer
from kafka.errors import UnknownTopicOrPartitionError

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.conftest import BrokerFactory

RECORDS = 10


def scrape(port: int) -> dict[str, float]:
    """The broker's Prometheus samples, by name with labels."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples = (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
    return {name: float(value) for name, _, value in samples if name}


def errors(samples: dict[str, float], api: str, error: str) -> float:
    return samples.get(f'tiered_mq_response_errors_total{{api="{api}",error="{error}"}}', 0.0)


def create(bootstrap: str, topic: str, partitions: int, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1, config=config)])
    futures[topic].result(15)


def delete(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic])[topic].result(15)


def producer(bootstrap: str) -> Producer:
    """A producer that neither retries nor creates topics: one failed request, one error."""
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "retries": 0,
            "allow.auto.create.topics": False,
            "linger.ms": 0,
        }
    )


def read_all(bootstrap: str, topic: str, n: int) -> int:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "metrics-reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    try:
        while got < n and (batch := consumer.consume(100, timeout=5)):
            for m in batch:
                assert m.error() is None, m.error()
                got += 1
    finally:
        consumer.close()
    return got


def start(broker_factory: BrokerFactory) -> tuple[BrokerProcess, int]:
    port = free_port()
    return broker_factory(extra_args=["--metrics-port", str(port)]), port


def test_error_codes_and_topic_traffic_as_kafka_counts_them(broker_factory: BrokerFactory) -> None:
    broker, port = start(broker_factory)
    create(broker.bootstrap, "orders", 1)
    p = producer(broker.bootstrap)
    for i in range(RECORDS):
        p.produce("orders", b"v" * (100 + i), partition=0)
        p.flush(15)  # one request per record
    samples = scrape(port)
    produces = samples['tiered_mq_requests_total{api="produce"}']
    assert produces == RECORDS
    # every Produce of one partition answered NONE once: one code per partition, NONE included
    assert errors(samples, "produce", "NONE") == produces
    assert errors(samples, "produce", "UNKNOWN_TOPIC_OR_PARTITION") == 0
    bytes_in = samples['tiered_mq_topic_bytes_in_total{topic="orders"}']
    assert samples['tiered_mq_topic_messages_in_total{topic="orders"}'] == RECORDS
    assert bytes_in == samples["tiered_mq_bytes_in_total"] > RECORDS * 100

    assert read_all(broker.bootstrap, "orders", RECORDS) == RECORDS
    samples = scrape(port)
    # the consumer read every batch once: the topic's bytes out are its bytes in
    assert samples['tiered_mq_topic_bytes_out_total{topic="orders"}'] == bytes_in
    fetches = samples['tiered_mq_requests_total{api="fetch"}']
    assert fetches > 0
    # a Fetch of one partition counts its top-level error and its partition's
    assert errors(samples, "fetch", "NONE") == 2 * fetches

    # a produce to a partition that no longer exists (kafka-python, no retries: one request
    # answered UNKNOWN_TOPIC_OR_PARTITION, which the client raises) counts once
    late = KafkaProducer(bootstrap_servers=broker.bootstrap, retries=0, acks=1)
    try:
        assert late.partitions_for("orders") == {0}  # cached by the client
        delete(broker.bootstrap, "orders")
        with pytest.raises(UnknownTopicOrPartitionError):
            late.send("orders", b"late", partition=0).get(15)
    finally:
        late.close()
    samples = scrape(port)
    assert errors(samples, "produce", "UNKNOWN_TOPIC_OR_PARTITION") == 1
    assert errors(samples, "produce", "NONE") == produces
    # the deleted topic's series are gone, the broker-wide totals stay
    assert not [name for name in samples if 'topic="orders"' in name]
    assert samples["tiered_mq_bytes_in_total"] == bytes_in


def test_a_topic_created_again_counts_from_zero(broker_factory: BrokerFactory) -> None:
    broker, port = start(broker_factory)
    for values in ([b"a" * 50] * 3, [b"b" * 50]):
        create(broker.bootstrap, "again", 1)
        p = producer(broker.bootstrap)
        for value in values:
            p.produce("again", value, partition=0)
        assert p.flush(15) == 0
        assert scrape(port)['tiered_mq_topic_messages_in_total{topic="again"}'] == len(values)
        delete(broker.bootstrap, "again")


def test_partition_counts(broker_factory: BrokerFactory) -> None:
    broker, port = start(broker_factory)
    create(broker.bootstrap, "plain", 3)
    create(broker.bootstrap, "strict", 2, **{"min.insync.replicas": "2"})
    samples = scrape(port)
    hosted = samples["tiered_mq_partitions"]
    assert hosted >= 5  # and the internal topics' partitions, once they exist
    assert samples["tiered_mq_leader_partitions"] == hosted
    assert samples["tiered_mq_under_replicated_partitions"] == 0
    # one replica: min.insync.replicas 2 is capped at 1 (Kafka 3.7+'s effectiveMinIsr), met;
    # a replica out of the ISR is counted: test_minisr_effective.py (ZooKeeper, broker 1 down)
    assert samples["tiered_mq_under_min_isr_partitions"] == 0
    assert samples["tiered_mq_offline_partitions"] == 0
    assert samples["tiered_mq_global_partitions"] == hosted
    delete(broker.bootstrap, "strict")
    samples = scrape(port)
    assert samples["tiered_mq_partitions"] == hosted - 2
