"""Turning tiered storage off cluster-wide as Kafka lets one (KAFKA-15267, KIP-950), on a
real broker, SeaweedFS and confluent-kafka's AdminClient: the start with
``remote.log.storage.system.enable=false`` is refused while any topic is tiered; a topic turned
off with ``remote.storage.enable=false,remote.log.delete.on.disable=true`` (the bare ``false``
is INVALID_CONFIG with Kafka's message) has its remote log deleted, and a deleted topic's
objects go; then the start succeeds, and a consumer from the earliest offset reads the records
still on disk at once, where it used to reset to records only the bucket held, for ever.
Kafka's read-only mode, ``remote.log.copy.disable=true``, uploads nothing more and serves every
record, and still counts as tiered for that start."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import take
from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.test_cold_url_change import configs, earliest_local
from tests.integration.test_tiered_config_changes import copy_lag
from tests.integration.test_tieroff_start import refused_start
from tests.integration.tiered_support import PREFIX, TieredBroker, message, wait_until
from tiered_mq.protocol.api_versions import ApiKey

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEPT, DROPPED = "kept-locally", "dropped"
OFF = configs("remote.log.storage.system.enable=false")
COUNT = 2000  # ~440 KB: seven 64 KiB segments
LOCAL = {"local.retention.bytes": "150000"}  # the last two or three stay on disk
KAFKA = "You have to delete all topics with the property remote.storage.enable=true"


def set_incrementally(bootstrap: str, topic: str, **values: str) -> None:
    """IncrementalAlterConfigs SET of ``values`` (``_`` for ``.``) on ``topic``."""
    entries = [
        ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
        for k, v in values.items()
    ]
    resource = ConfigResource("topic", topic, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(15)


def earliest(port: int, topic: str) -> int:
    """ListOffsets v8 EARLIEST (-2): the log start offset."""
    part = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}
    topics = [{"name": topic, "partitions": [part]}]
    body = {"replica_id": -1, "isolation_level": 0, "topics": topics}
    answer = request(port, ApiKey.LIST_OFFSETS, 8, body)["topics"][0]["partitions"][0]
    assert answer["error_code"] == 0, answer
    return int(answer["offset"])


def segment_objects(b: TieredBroker, topic: str) -> list[str]:
    return [k for k in b.objects(topic) if not k.endswith(".json")]


def test_tiering_off_after_turning_every_topic_off(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        for topic in (KEPT, DROPPED):
            b.create_topic(topic, **LOCAL)
            b.produce(topic, 0, COUNT)
        for topic in (KEPT, DROPPED):
            wait_until(
                lambda t=topic: earliest_local(b.process.port, t) > 0, what=f"{topic} uploads"
            )
        bucket = f"s3://{b.bucket}/{PREFIX}"
        b.process.stop()

        status, out = refused_start(b.process.data_dir, *OFF)
        assert status == 1, out
        assert f"{KAFKA} before disabling tiered storage cluster-wide: 2 topic(s)" in out
        assert f"({DROPPED}, {KEPT})" in out and f"the cold URL {bucket})" in out

        b.process.start()  # tiering on: do what the refusal says
        with pytest.raises(KafkaException) as refused:
            set_incrementally(b.bootstrap, KEPT, remote_storage_enable="false")
        assert refused.value.args[0].code() == KafkaError.INVALID_CONFIG
        assert "It is invalid to disable remote storage without deleting remote data" in str(
            refused.value
        )
        set_incrementally(
            b.bootstrap, KEPT, remote_storage_enable="false", remote_log_delete_on_disable="true"
        )
        wait_until(lambda: not segment_objects(b, KEPT), what="the remote log to be deleted")
        b.process.stop()
        status, out = refused_start(b.process.data_dir, *OFF)  # the other is still tiered
        assert status == 1, out
        assert f"1 topic(s) in the embedded cluster.json have it ({DROPPED})" in out
        b.process.start()
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.delete_topics([DROPPED])[DROPPED].result(15)
        wait_until(lambda: not b.objects(DROPPED), what="the deleted topic's objects to go")
        local_start = earliest_local(b.process.port, KEPT)
        assert 0 < local_start < COUNT  # below it the records were only in the bucket, now gone
        b.process.stop()

        with BrokerProcess(b.process.data_dir, extra_args=OFF) as off:
            assert earliest(off.port, KEPT) == earliest_local(off.port, KEPT) == local_start
            consumer = Consumer(
                {"bootstrap.servers": off.bootstrap, "group.id": "after-tiering-off"}
                | {"auto.offset.reset": "earliest", "enable.auto.commit": False}
            )
            try:
                consumer.subscribe([KEPT])
                got = take(consumer, COUNT - local_start, timeout=30)
            finally:
                consumer.close()
            assert [m.offset() for m in got] == list(range(local_start, COUNT))
            assert [(m.key(), m.value()) for m in got[:1]] == [message(local_start)]


def test_read_only_remote_storage_keeps_serving_and_still_counts_as_tiered(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    """Kafka's way to keep the remote data without uploading more, ``remote.log.copy.disable``
    (local retention then unset or equal to retention): no new uploads, every record still
    read from the bucket and the disk; the topic has remote.storage.enable=true, so a start
    with tiered storage off is still refused."""
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(KEPT, **LOCAL)
        b.produce(KEPT, 0, COUNT)
        wait_until(lambda: earliest_local(b.process.port, KEPT) > 0, what="uploads")
        wait_until(lambda: copy_lag(b, KEPT) == (0, 0), what="every rolled segment uploaded")
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        entries = [
            ConfigEntry(
                "remote.log.copy.disable", "true", incremental_operation=AlterConfigOpType.SET
            ),
            ConfigEntry(
                "local.retention.bytes", None, incremental_operation=AlterConfigOpType.DELETE
            ),
        ]
        resource = ConfigResource("topic", KEPT, incremental_configs=entries)
        admin.incremental_alter_configs([resource])[resource].result(15)
        uploaded = b.remote_segments(KEPT)[-1].end_offset
        b.produce(KEPT, COUNT, COUNT)  # several more segments roll, none is uploaded
        time.sleep(2)  # ~10 uploader passes
        assert b.remote_segments(KEPT)[-1].end_offset == uploaded
        assert earliest(b.process.port, KEPT) == 0
        consumer = Consumer(
            {"bootstrap.servers": b.bootstrap, "group.id": "read-only"}
            | {"auto.offset.reset": "earliest", "enable.auto.commit": False}
        )
        try:
            consumer.subscribe([KEPT])
            got = take(consumer, 2 * COUNT, timeout=60)
        finally:
            consumer.close()
        assert [m.offset() for m in got] == list(range(2 * COUNT))
        assert [(m.key(), m.value()) for m in got[::997]] == [
            message(i) for i in range(0, 2 * COUNT, 997)
        ]
        b.process.stop()

        status, out = refused_start(b.process.data_dir, *OFF)
        assert status == 1, out
        assert f"1 topic(s) in the embedded cluster.json have it ({KEPT})" in out
