"""The bucket hung (SeaweedFS frozen with SIGSTOP) under admin requests and a restart: a Kafka
broker's CreateTopics, CreatePartitions and AlterConfigs never wait for remote storage, nor
does its start, so they are answered, and the broker is ready, within seconds, not after the
S3 client's timeouts and retries (minutes per request); the topic.json writes they cause land
once the bucket answers again."""

from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, message, wait_until
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import TopicManifest, parse_topic_manifest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ANSWER_WITHIN_S = 15.0  # the broker waits 5 s for topic.json; librdkafka's timeout is 60 s


def topic_json(broker: TieredBroker, topic: str) -> TopicManifest | None:
    try:
        return parse_topic_manifest(broker.store.get(layout.topic_manifest_key(PREFIX, topic))[0])
    except Exception:
        return None


def timed(future: Future[Any]) -> float:
    """Seconds until ``future`` (a confluent-kafka admin future) succeeds; fails if it takes
    longer than ANSWER_WITHIN_S or ends in an error."""
    start = time.monotonic()
    future.result(ANSWER_WITHIN_S)
    return time.monotonic() - start


def test_admin_changes_are_answered_while_the_bucket_hangs(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as broker:
        broker.create_topic("orders")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        retention = ConfigEntry(
            "retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET
        )
        resource = ConfigResource("topic", "orders", incremental_configs=[retention])
        tiered = NewTopic("payments", 1, 1, config={"remote.storage.enable": "true"})
        with seaweedfs.hung():
            took = [
                timed(admin.incremental_alter_configs([resource])[resource]),
                timed(admin.create_topics([tiered])["payments"]),
                timed(admin.create_partitions([NewPartitions("orders", 3)])["orders"]),
            ]
        assert all(t < ANSWER_WITHIN_S for t in took), took
        # the changes stand, and the bucket's copy follows once it answers again
        described = admin.describe_configs([ConfigResource("topic", "orders")])
        configs = next(iter(described.values())).result(10)
        assert configs["retention.ms"].value == "86400000"
        orders = wait_until(
            lambda: (
                (m := topic_json(broker, "orders")) is not None
                and m.partition_count == 3
                and m.configs.get("retention.ms") == "86400000"
                and m
            ),
            timeout=60,
            what="orders' topic.json to follow the changes",
        )
        assert orders.configs["remote.storage.enable"] == "true"
        wait_until(lambda: topic_json(broker, "payments"), timeout=60, what="payments' topic.json")


def test_a_restart_with_the_bucket_hung_serves_hot_data(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as broker:
        for topic in ("orders", "payments"):
            broker.create_topic(topic)
        broker.process.stop()
        with seaweedfs.hung():
            started = time.monotonic()
            broker.process.start()  # ready (answers Metadata) within its 30 s start timeout
            took = time.monotonic() - started
            assert "unreachable at start" in broker.process.log_tail()
            broker.produce("orders", 0, 100)
            consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "hot"})
            consumer.assign([TopicPartition("orders", 0, 0)])
            try:
                got: list[tuple[int, bytes | None]] = []
                deadline = time.monotonic() + 20
                while len(got) < 100 and time.monotonic() < deadline:
                    got += [(m.offset(), m.value()) for m in consumer.consume(100, timeout=1)]
            finally:
                consumer.close()
            assert got == [(i, message(i)[1]) for i in range(100)]
        assert took < 25, took
        # the bucket answers again: the start's topic.json writes land
        wait_until(lambda: topic_json(broker, "payments"), timeout=60, what="topic.json")
