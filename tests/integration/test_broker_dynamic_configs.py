"""Dynamic broker configs on a real broker (``tiered-mq dev``), as ``kafka-configs.sh
--entity-type brokers --entity-default`` / ``--entity-name 0`` set them: topics without their own
override take a changed ``log.retention.ms`` and ``message.max.bytes`` at once, and the values
survive a restart, on the embedded coordinator and on ZooKeeper (``/config/brokers/<default>``).

confluent-kafka's AdminClient drives the per-broker level and every describe; it refuses a
ConfigResource with an empty name ("Invalid ConfigResource"), so the cluster-wide default is
set with an IncrementalAlterConfigs request of its own here (the Java AdminClient, which
kafka-configs.sh uses, sets it in test_broker_java.py)."""

from __future__ import annotations

import json
import time
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
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)

pytestmark = pytest.mark.integration
BIG = 1_500_000  # above Kafka's default message.max.bytes (1048588), below the new 2000000


def alter_broker(
    admin: AdminClient, name: str, validate_only: bool = False, **values: str | None
) -> None:
    """SET (value) or DELETE (None) ``values`` (dots as underscores) on BROKER ``name``."""
    set_, delete = AlterConfigOpType.SET, AlterConfigOpType.DELETE
    entries = [
        ConfigEntry(
            key.replace("_", "."), value, incremental_operation=delete if value is None else set_
        )
        for key, value in values.items()
    ]
    resource = ConfigResource(ResourceType.BROKER, name, incremental_configs=entries)
    admin.incremental_alter_configs([resource], validate_only=validate_only)[resource].result(20)


def alter_default(port: int, validate_only: bool = False, **values: str | None) -> None:
    """IncrementalAlterConfigs SET/DELETE on the BROKER resource named "" (--entity-default);
    KafkaException as confluent-kafka raises it for a refusal."""
    configs = [
        {"name": key.replace("_", "."), "config_operation": 1 if v is None else 0, "value": v}
        for key, v in values.items()
    ]
    resources = [{"resource_type": 4, "resource_name": "", "configs": configs}]
    body = {"resources": resources, "validate_only": validate_only}
    answer = request(port, 44, 0, body)["responses"][0]
    if answer["error_code"]:
        raise KafkaException(KafkaError(answer["error_code"], answer["error_message"]))


def topic_config(admin: AdminClient, topic: str, key: str) -> tuple[str, ConfigSource]:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    entry = admin.describe_configs([resource])[resource].result(20)[key]
    return entry.value, ConfigSource(entry.source)


def produce_big(bootstrap: str, topic: str) -> KafkaError | None:
    """The delivery error of one BIG record (None: delivered)."""
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 3_000_000})
    producer.produce(topic, b"x" * BIG, on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(30)
    return errors[0]


def log_start_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        low, _ = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        return int(low)
    finally:
        consumer.close()


def refusal(broker: BrokerProcess, name: str, **values: str) -> KafkaError:
    with pytest.raises(KafkaException) as e:
        if name:
            alter_broker(AdminClient({"bootstrap.servers": broker.bootstrap}), name, **values)
        else:
            alter_default(broker.port, **values)
    return e.value.args[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("coordination", ["embedded", "zookeeper"])
def test_cluster_default_reaches_topics_and_survives_a_restart(
    tmp_path: Path, coordination: str, request: pytest.FixtureRequest
) -> None:
    args = ["--config", "log.retention.check.interval.ms=500"]
    zk_connect = None
    if coordination == "zookeeper":
        server: ZooKeeperServer = request.getfixturevalue("zookeeper")
        zk_connect = server.connect_string(server.new_chroot())
        args += ["--config", f"zookeeper.connect={zk_connect}"]
    with BrokerProcess(tmp_path / "data", extra_args=args) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topics = [
            NewTopic("plain", 1, 1, config={"segment.bytes": str(2 * BIG)}),
            NewTopic("own", 1, 1, config={"retention.ms": "3600000"}),
        ]
        for future in admin.create_topics(topics).values():
            future.result(20)
        assert produce_big(broker.bootstrap, "plain") is not None  # too large by default

        alter_default(broker.port, log_retention_ms="86400000", message_max_bytes="2000000")
        default = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        assert topic_config(admin, "plain", "retention.ms") == ("86400000", default)
        assert topic_config(admin, "plain", "max.message.bytes") == ("2000000", default)
        assert topic_config(admin, "own", "retention.ms")[0] == "3600000"
        assert produce_big(broker.bootstrap, "plain") is None  # the live partition took it

        # this broker's own level wins over the cluster default; deleting it restores that
        alter_broker(admin, "0", log_retention_ms="7200000")
        per_broker = ConfigSource.DYNAMIC_BROKER_CONFIG
        assert topic_config(admin, "plain", "retention.ms") == ("7200000", per_broker)
        alter_broker(admin, "0", log_retention_ms=None)
        assert topic_config(admin, "plain", "retention.ms") == ("86400000", default)

        # Kafka's refusals; validate_only changes nothing
        refused = refusal(broker, "", num_partitions="3")
        assert refused.code() == KafkaError.INVALID_REQUEST
        assert "Cannot update these configs dynamically: [num.partitions]" in refused.str()
        refused = refusal(broker, "0", log_retention_ms="tomorrow")
        assert refused.code() == KafkaError.INVALID_REQUEST
        assert "log.retention.ms" in refused.str()
        alter_default(broker.port, validate_only=True, log_retention_ms="1000")
        assert topic_config(admin, "plain", "retention.ms") == ("86400000", default)

        # retention from the default deletes old segments of the topic without an override
        for _ in range(3):  # one BIG batch a segment: two exceed segment.bytes, so it rolls
            assert produce_big(broker.bootstrap, "plain") is None
        alter_default(broker.port, log_retention_ms="1000")
        deadline = time.monotonic() + 20
        while log_start_offset(broker.bootstrap, "plain") == 0:
            assert time.monotonic() < deadline, "retention from the default did not run"
            time.sleep(0.5)
        assert log_start_offset(broker.bootstrap, "own") == 0

        broker.stop()
        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert topic_config(admin, "plain", "retention.ms") == ("1000", default)
        assert topic_config(admin, "plain", "max.message.bytes") == ("2000000", default)
        assert produce_big(broker.bootstrap, "plain") is None
        this_broker = ConfigResource(ResourceType.BROKER, "0")
        listed = admin.describe_configs([this_broker])[this_broker].result(20)
        assert (listed["log.retention.ms"].value, listed["log.retention.ms"].source) == (
            "1000",
            default.value,
        )
        assert not listed["log.retention.ms"].is_read_only

        alter_default(broker.port, message_max_bytes=None)  # Kafka's default again
        assert topic_config(admin, "plain", "max.message.bytes") == (
            "1048588",
            ConfigSource.DEFAULT_CONFIG,
        )

    if zk_connect is not None:  # where a Kafka operator looks
        zk = kazoo_client(zk_connect)
        try:
            stored = json.loads(zk.get("/config/brokers/<default>")[0])
        finally:
            zk.stop()
        assert stored == {"version": 1, "config": {"log.retention.ms": "1000"}}
