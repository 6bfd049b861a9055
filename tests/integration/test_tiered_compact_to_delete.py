"""A compacted topic changed on the live broker to cleanup.policy=delete with
remote.storage.enable=true is tiered at once, as in Kafka: its rolled segments go to the
bucket, local retention (local.retention.bytes) deletes the uploaded ones, and consumers read
every record from offset 0, from the bucket. Before, a partition opened compacted never got an
uploader: nothing was uploaded and no local retention ran until the next broker start."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, check_manifest, message, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "was-compacted"
COUNT = 2000


def test_a_compacted_topic_turned_to_delete_is_tiered_at_once(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        new = NewTopic(TOPIC, 1, 1, config={"cleanup.policy": "compact"})
        admin.create_topics([new])[TOPIC].result(timeout=10)
        changes = {
            "cleanup.policy": "delete",
            "remote.storage.enable": "true",
            "local.retention.bytes": "1",
        }
        entries = [
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
            for k, v in changes.items()
        ]
        resource = ConfigResource("topic", TOPIC, incremental_configs=entries)
        admin.incremental_alter_configs([resource])[resource].result(timeout=10)

        b.produce(TOPIC, 0, COUNT)  # distinct keys: message(i)
        wait_until(
            lambda: len(b.local_segments(TOPIC)) == 1 and len(b.remote_segments(TOPIC)) >= 5,
            what="uploads and local retention",
        )
        manifest = b.manifest(TOPIC)
        assert manifest is not None
        check_manifest(manifest)
        assert manifest.remote_log_start_offset() == 0
        local_start = int(b.local_segments(TOPIC)[0].stem)
        assert local_start == manifest.end_offset() + 1  # the rest only in the bucket

        consumer = Consumer(
            {"bootstrap.servers": b.bootstrap, "group.id": "all", "enable.auto.commit": False}
        )
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        got: list[tuple[int, bytes, bytes]] = []
        try:
            while len(got) < COUNT:
                batch = consumer.consume(1000, timeout=15)
                assert batch, f"stalled after {len(got)} records"
                for m in batch:
                    assert m.error() is None, m.error()
                    got.append((m.offset(), m.key(), m.value()))
        finally:
            consumer.close()
        assert got == [(i, *message(i)) for i in range(COUNT)]
