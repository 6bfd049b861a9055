"""DescribeConfigs of the BROKER resource on a real broker (``tiered-mq dev``) with confluent-
kafka's AdminClient, as ``kafka-configs.sh --entity-type brokers --entity-name 0 --describe
--all`` shows it: Kafka's defaults (``log.retention.hours=168`` from DEFAULT_CONFIG,
``offset.metadata.max.bytes=4096``), ``--config`` values as STATIC_BROKER_CONFIG with Kafka's
hours/minutes/ms precedence reaching a topic, and ``offset.metadata.max.bytes`` bounding what a
real consumer may commit, and a transactional producer send to a transaction: set with
``--config`` at start; refused at runtime, as Kafka refuses it (read-only), leaving the bound as
it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration


def broker_configs(bootstrap: str) -> dict[str, ConfigEntry]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    return admin.describe_configs([resource])[resource].result(20)  # type: ignore[no-any-return]


def shown(entry: ConfigEntry) -> tuple[str | None, ConfigSource]:
    return entry.value, ConfigSource(entry.source)


def commit_error(bootstrap: str, topic: str, size: int) -> KafkaError | None:
    """The error of a synchronous commit of offset 1 with metadata of ``size`` characters on
    the wire (None: committed). confluent-kafka sends a string's terminating NUL with it
    (``metadata_size = strlen + 1``), and the broker counts it, as Kafka does."""
    metadata = "m" * (size - 1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "meta"})
    try:
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 1, metadata=metadata)], asynchronous=False
        )
        return None
    except KafkaException as e:
        err: KafkaError = e.args[0]
        return err
    finally:
        consumer.close()


def test_kafkas_broker_defaults_and_their_documentation(broker: BrokerProcess) -> None:
    configs = broker_configs(broker.bootstrap)
    assert shown(configs["log.retention.hours"]) == ("168", ConfigSource.DEFAULT_CONFIG)
    assert configs["log.retention.hours"].is_read_only
    assert shown(configs["log.retention.ms"]) == (None, ConfigSource.DEFAULT_CONFIG)
    assert shown(configs["offset.metadata.max.bytes"]) == ("4096", ConfigSource.DEFAULT_CONFIG)
    assert configs["offset.metadata.max.bytes"].is_read_only
    for name, value in (
        ("num.partitions", "1"),
        ("default.replication.factor", "1"),
        ("log.roll.hours", "168"),
        ("log.retention.check.interval.ms", "300000"),
        ("offsets.topic.num.partitions", "50"),
        ("offsets.retention.minutes", "10080"),
        ("group.max.session.timeout.ms", "1800000"),
    ):
        assert shown(configs[name]) == (value, ConfigSource.DEFAULT_CONFIG), name

    # confluent-kafka does not ask for documentation (DescribeConfigs v3's flag): ask directly
    body = {
        "resources": [{"resource_type": 4, "resource_name": "0", "configuration_keys": None}],
        "include_synonyms": False,
        "include_documentation": True,
    }
    listed = request(broker.port, 32, 3, body)["results"][0]["configs"]
    docs = {c["name"]: c["documentation"] for c in listed}
    assert set(docs) == set(configs)
    assert [name for name, doc in docs.items() if not doc] == []


def test_static_hours_and_minutes_reach_a_topic(broker_factory: BrokerFactory) -> None:
    args = ["--config", "log.retention.hours=1", "--config", "log.retention.minutes=30"]
    broker = broker_factory(extra_args=args)
    configs = broker_configs(broker.bootstrap)
    assert shown(configs["log.retention.hours"]) == ("1", ConfigSource.STATIC_BROKER_CONFIG)
    assert shown(configs["log.retention.minutes"]) == ("30", ConfigSource.STATIC_BROKER_CONFIG)
    assert shown(configs["log.retention.ms"]) == (None, ConfigSource.DEFAULT_CONFIG)

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(20)
    resource = ConfigResource(ResourceType.TOPIC, "t")
    entry = admin.describe_configs([resource])[resource].result(20)["retention.ms"]
    assert shown(entry) == ("1800000", ConfigSource.STATIC_BROKER_CONFIG)  # minutes win
    assert list(entry.synonyms) == [
        "log.retention.minutes",
        "log.retention.hours",
    ]  # confluent-kafka keys them by name: hours' STATIC and DEFAULT share one key


def test_offset_metadata_max_bytes_is_set_at_start_and_static(
    tmp_path: Path, broker_factory: BrokerFactory
) -> None:
    broker = broker_factory(extra_args=["--config", "offset.metadata.max.bytes=100"])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(20)
    assert commit_error(broker.bootstrap, "t", 100) is None
    refused = commit_error(broker.bootstrap, "t", 101)
    assert refused is not None and refused.code() == KafkaError.OFFSET_METADATA_TOO_LARGE
    configs = broker_configs(broker.bootstrap)
    assert shown(configs["offset.metadata.max.bytes"]) == ("100", ConfigSource.STATIC_BROKER_CONFIG)

    # read-only in Kafka: a runtime change is refused and the bound stays
    entries = [
        ConfigEntry(
            "offset.metadata.max.bytes", "10000", incremental_operation=AlterConfigOpType.SET
        )
    ]
    resource = ConfigResource(ResourceType.BROKER, "0", incremental_configs=entries)
    with pytest.raises(KafkaException) as e:
        admin.incremental_alter_configs([resource])[resource].result(20)
    assert e.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert "offset.metadata.max.bytes" in e.value.args[0].str()
    refused = commit_error(broker.bootstrap, "t", 101)
    assert refused is not None and refused.code() == KafkaError.OFFSET_METADATA_TOO_LARGE


def test_kafkas_default_bound_of_4096(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(20)
    assert commit_error(broker.bootstrap, "t", 4096) is None
    refused = commit_error(broker.bootstrap, "t", 4097)
    assert refused is not None and refused.code() == KafkaError.OFFSET_METADATA_TOO_LARGE


def test_offset_metadata_max_bytes_bounds_offsets_sent_to_a_transaction(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(extra_args=["--config", "offset.metadata.max.bytes=100"])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(20)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "txn-meta"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "txn-meta"})
    try:
        producer.init_transactions(20)
        group = consumer.consumer_group_metadata()
        producer.begin_transaction()
        fits = [TopicPartition("t", 0, 5, metadata="m" * 99)]  # 100 with the NUL
        producer.send_offsets_to_transaction(fits, group, 20)
        producer.commit_transaction(20)

        producer.begin_transaction()
        too_long = [TopicPartition("t", 0, 9, metadata="m" * 100)]
        with pytest.raises(KafkaException) as e:
            producer.send_offsets_to_transaction(too_long, group, 20)
        assert e.value.args[0].code() == KafkaError.OFFSET_METADATA_TOO_LARGE
        assert e.value.args[0].txn_requires_abort()
        producer.abort_transaction(20)
        committed = consumer.committed([TopicPartition("t", 0)], timeout=10)
        assert committed[0].offset == 5
    finally:
        consumer.close()
