"""A restarted broker's tiering passes skip the uploaded segments and publish only changes;
what a user sees of the tiered log is the same: on SeaweedFS, with confluent-kafka.

The first passes after a start no longer ask the uploaded segments opened from disk for their
next offset, and an idle pass no longer sets the metrics again; these check, with a real
broker, that the remote log's metrics are there after the restart, that segments rolled after
it are still uploaded (and counted in the copy lag until then), that local retention still
deletes only uploaded segments, and that every record reads back, from the bucket and the
disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, check_manifest, message, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "restarted"
LAG = "tiered_mq_remote_copy_lag_segments"
REMOTE_SEGMENTS = "tiered_mq_remote_log_segments"


def uploaded_all(b: TieredBroker, at_least: int) -> bool:
    """Every rolled segment uploaded: the metrics of a live uploader say so."""
    metrics = b.metrics()
    labels = f'{{partition="0",topic="{TOPIC}"}}'
    return (
        metrics.get(LAG + labels) == 0
        and metrics.get(REMOTE_SEGMENTS + labels, 0) >= at_least
        and metrics.get(REMOTE_SEGMENTS + labels) == len(b.local_segments(TOPIC)) - 1
    )


def read_all(bootstrap: str, end: int) -> list[tuple[int, bytes, bytes]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "coldloop", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got: list[tuple[int, bytes, bytes]] = []
    try:
        while len(got) < end:
            batch = consumer.consume(1000, timeout=15)
            assert batch, f"stalled after {len(got)} messages"
            for m in batch:
                assert m.error() is None, m.error()
                got.append((m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    return got


def test_restart_uploads_new_segments_and_keeps_the_remote_log(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(TOPIC)
        b.produce(TOPIC, 0, 2000)
        wait_until(lambda: uploaded_all(b, 4), what="the rolled segments uploaded")
        before = b.manifest(TOPIC)
        assert before is not None
        rolled = len(b.local_segments(TOPIC)) - 1

        b.process.restart()  # SIGTERM, start again: the segments are opened from disk
        wait_until(lambda: uploaded_all(b, rolled), what="the remote log's metrics again")
        assert b.manifest(TOPIC) == before  # nothing uploaded twice, nothing rewritten

        b.produce(TOPIC, 2000, 2000)
        wait_until(lambda: uploaded_all(b, rolled + 3), what="the new segments uploaded")
        after = b.manifest(TOPIC)
        assert after is not None
        check_manifest(after)
        assert after.segments[: len(before.segments)] == before.segments

        # local retention now deletes the uploaded segments, and only those
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        configs = {"remote.storage.enable": "true", "local.retention.bytes": "1"}
        for future in admin.alter_configs(
            [ConfigResource("topic", TOPIC, set_config=configs)]
        ).values():
            future.result(timeout=10)
        wait_until(lambda: len(b.local_segments(TOPIC)) == 1, what="local retention")
        first_local = int(b.local_segments(TOPIC)[0].stem)
        last = b.manifest(TOPIC)
        assert last is not None
        assert last.readable_segments()[-1].end_offset + 1 == first_local
        assert read_all(b.bootstrap, 4000) == [(i, *message(i)) for i in range(4000)]
