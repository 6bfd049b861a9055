"""Topic config changes of a tiered topic on a real broker and SeaweedFS, as Kafka's KIP-950
handles them: ``remote.log.copy.disable=true`` stops the uploads and the copy lag metrics read
0 (nothing waits for an upload by design)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, wait_until

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
