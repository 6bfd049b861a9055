"""The bucket describes its topics: a tiered topic's ``topic.json`` (partition count and
configs) follows CreateTopics, CreatePartitions and AlterConfigs, so replay and restore need
only the bucket. Topics without remote storage leave no manifest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import TopicManifest, parse_topic_manifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import ObjectNotFoundError

pytestmark = [pytest.mark.integration]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    b = BrokerProcess(tmp_path / "data", extra_args=["--cold-url", f"file://{tmp_path}/bucket"])
    b.start()
    yield b
    b.stop()


def topic_manifest(tmp_path: Path, topic: str) -> TopicManifest | None:
    store = open_sync_store(f"file://{tmp_path}/bucket")
    try:
        data, _ = store.get(layout.topic_manifest_key("", topic))
    except ObjectNotFoundError:
        return None
    return parse_topic_manifest(data)


def test_topic_manifest_follows_admin_changes(broker: BrokerProcess, tmp_path: Path) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    tiered = NewTopic("orders", 2, 1, config={"remote.storage.enable": "true"})
    plain = NewTopic("scratch", 1, 1)
    for future in admin.create_topics([tiered, plain]).values():
        future.result(15)

    manifest = topic_manifest(tmp_path, "orders")
    assert manifest is not None
    assert manifest.partition_count == 2
    assert manifest.configs["remote.storage.enable"] == "true"
    assert topic_manifest(tmp_path, "scratch") is None

    admin.create_partitions([NewPartitions("orders", 5)])["orders"].result(15)
    resource = ConfigResource(
        "topic", "orders", set_config={"remote.storage.enable": "true", "retention.ms": "-1"}
    )
    for future in admin.alter_configs([resource]).values():
        future.result(15)

    manifest = topic_manifest(tmp_path, "orders")
    assert manifest is not None
    assert manifest.partition_count == 5
    assert manifest.configs["retention.ms"] == "-1"
