"""Topic config changes of a tiered topic on a real broker and SeaweedFS, as Kafka's KIP-950
handles them: ``remote.log.copy.disable=true`` stops the uploads and the copy lag metrics read
0 (nothing waits for an upload by design); ``remote.storage.enable=false`` with
``remote.log.delete.on.disable=true`` deletes the remote log, and then the topic's topic.json."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, wait_until
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import parse_topic_manifest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LAG = ("tiered_mq_remote_copy_lag_segments", "tiered_mq_remote_copy_lag_bytes")


def set_topic_configs(b: TieredBroker, topic: str, **configs: str) -> None:
    """AlterConfigs: ``configs`` (``_`` for ``.``) become the topic's overrides."""
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    overrides = {k.replace("_", "."): v for k, v in configs.items()}
    resource = ConfigResource("topic", topic, set_config=overrides)
    for future in admin.alter_configs([resource]).values():
        future.result(15)


def copy_lag(b: TieredBroker, topic: str) -> tuple[float | None, ...]:
    """The partition's copy lag gauges as the metrics endpoint exports them (None: absent)."""
    exported = b.metrics()
    return tuple(exported.get(f'{name}{{partition="0",topic="{topic}"}}') for name in LAG)


def test_copy_lag_reads_zero_while_copying_is_disabled(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    topic = "read-only-tier"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic)
        b.produce(topic, 0, 1000)
        wait_until(lambda: b.remote_segments(topic), what="first uploads")
        wait_until(lambda: copy_lag(b, topic) == (0, 0), what="the copy lag to settle")

        set_topic_configs(b, topic, remote_storage_enable="true", remote_log_copy_disable="true")
        uploaded = b.remote_segments(topic)[-1].end_offset
        b.produce(topic, 1000, 2000)  # ~440 KB: several 64 KiB segments roll, none is copied
        deadline = time.monotonic() + 3  # ~15 uploader passes
        while time.monotonic() < deadline:
            assert copy_lag(b, topic) == (0, 0)
            time.sleep(0.2)
        assert len(b.local_segments(topic)) >= 5
        assert b.remote_segments(topic)[-1].end_offset == uploaded

        # copying again: the rolled segments are uploaded and the lag drains
        set_topic_configs(b, topic, remote_storage_enable="true")
        wait_until(
            lambda: b.remote_segments(topic)[-1].end_offset > 2000 and copy_lag(b, topic) == (0, 0),
            timeout=60,
            what="uploads to resume",
        )


def topic_json(b: TieredBroker, topic: str) -> dict[str, str] | None:
    """The configs in the topic's topic.json (None: there is none)."""
    key = layout.topic_manifest_key(PREFIX, topic)
    if key not in b.objects(topic):
        return None
    return parse_topic_manifest(b.store.get(key)[0]).configs


def test_disabling_remote_storage_removes_the_topic_manifest_after_the_segments(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    """DESIGN.md: topic.json is there so the bucket alone can restore or replay the topic.
    With its remote log deleted (KIP-950) there is nothing to restore: topic.json goes too,
    after the last segment object. Before, it stayed, advertising remote.storage.enable=true."""
    topic = "turned-off"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic)
        b.produce(topic, 0, 1000)
        wait_until(lambda: b.remote_segments(topic), what="first uploads")
        assert (topic_json(b, topic) or {}).get("remote.storage.enable") == "true"

        off = {"remote_storage_enable": "false", "remote_log_delete_on_disable": "true"}
        set_topic_configs(b, topic, **off)
        wait_until(
            lambda: [k for k in b.objects(topic) if not k.endswith(".json")] == [],
            what="the remote log to be deleted",
        )
        wait_until(lambda: topic_json(b, topic) is None, what="topic.json to go")
        manifest = b.manifest(topic)  # the partition manifest stays, with no segment
        assert manifest is not None and manifest.segments == []

        set_topic_configs(b, topic, remote_storage_enable="true")  # tiered again
        assert (topic_json(b, topic) or {}).get("remote.storage.enable") == "true"
        wait_until(lambda: b.remote_segments(topic), timeout=30, what="uploads to start again")
