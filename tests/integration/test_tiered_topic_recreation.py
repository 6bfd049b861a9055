"""A tiered topic deleted while the bucket is unreachable, then created again with the same name,
on SeaweedFS: DeleteTopics succeeds at once (Kafka deletes remote data asynchronously), the
groups lose their committed offsets of the deleted topic, the new topic never adopts the old
manifest (every acknowledged record of the new topic is read back, none of the old ones), and
the old objects leave the bucket once it is back, also after a SIGKILL of the broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "reborn"
OFFSET_INVALID = -1001  # confluent-kafka: no committed offset


def new_value(i: int) -> bytes:
    return b"NEW-%08d|" % i + b"y" * 190


def produce_new(bootstrap: str, count: int) -> list[int]:
    """``count`` records of the new incarnation; the offsets acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 16384})
    acked: list[int] = []

    def delivered(err: object, msg: object) -> None:
        if err is None:
            acked.append(msg.offset())  # type: ignore[attr-defined]

    for i in range(count):
        producer.produce(TOPIC, new_value(i), partition=0, on_delivery=delivered)
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    return acked


def read_all(bootstrap: str, count: int) -> dict[int, bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got: dict[int, bytes] = {}
    try:
        while len(got) < count:
            batch = consumer.consume(1000, timeout=15)
            assert batch, f"stalled after {len(got)} records"
            for m in batch:
                assert m.error() is None, m.error()
                got[m.offset()] = m.value()
    finally:
        consumer.close()
    return got


def committed(bootstrap: str, group: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return int(consumer.committed([TopicPartition(TOPIC, 0)], timeout=10)[0].offset)
    finally:
        consumer.close()


def commit(bootstrap: str, group: str, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def old_incarnation(b: TieredBroker) -> set[str]:
    """A tiered topic with 2,000 records uploaded and a group at 1500; its segment objects."""
    b.create_topic(TOPIC, **{"local.retention.bytes": "1"})
    b.produce(TOPIC, 0, 2000)
    wait_until(lambda: len(b.local_segments(TOPIC)) == 1, what="the old records' uploads")
    commit(b.bootstrap, "app", 1500)
    assert committed(b.bootstrap, "app") == 1500
    manifest = b.manifest(TOPIC)
    assert manifest is not None and manifest.end_offset() > 1500
    keys = {k for s in manifest.segments for k in s.objects.values() if k}
    assert keys <= set(b.objects(TOPIC))
    return keys  # the manifest keys are the new topic's too


def delete_while_s3_down(b: TieredBroker, seaweedfs: SeaweedFS) -> None:  # noqa: F811
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    seaweedfs.stop()
    try:
        admin.delete_topics([TOPIC], operation_timeout=30)[TOPIC].result(timeout=60)
        assert TOPIC not in admin.list_topics(timeout=10).topics
        assert committed(b.bootstrap, "app") == OFFSET_INVALID  # Kafka drops them
    finally:
        seaweedfs.start()


def recreate_and_check(b: TieredBroker, old_keys: set[str]) -> None:
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    conf = {"remote.storage.enable": "true", "local.retention.bytes": "1"}
    admin.create_topics([NewTopic(TOPIC, 1, 1, config=conf)])[TOPIC].result(timeout=30)
    acked = produce_new(b.bootstrap, 2000)
    assert sorted(acked) == list(range(2000))
    # uploaded, and the local copies below the active segment deleted by local retention
    wait_until(
        lambda: (
            len(b.local_segments(TOPIC)) == 1
            and b.remote_segments(TOPIC)
            and b.remote_segments(TOPIC)[-1].end_offset + 1 == int(b.local_segments(TOPIC)[0].stem)
        ),
        timeout=60,
        what="the new records' uploads",
    )
    got = read_all(b.bootstrap, 2000)
    assert {o: v for o, v in got.items() if o < 2000} == {i: new_value(i) for i in range(2000)}
    assert committed(b.bootstrap, "app") == OFFSET_INVALID
    wait_until(
        lambda: not old_keys & set(b.objects(TOPIC)),
        timeout=60,
        what="the old incarnation's objects to leave the bucket",
    )


def test_recreated_topic_never_adopts_the_deleted_topics_bucket_data(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        old_keys = old_incarnation(b)
        delete_while_s3_down(b, seaweedfs)
        recreate_and_check(b, old_keys)


def test_remote_deletion_resumes_after_a_sigkill(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        old_keys = old_incarnation(b)
        seaweedfs.stop()
        try:
            admin = AdminClient({"bootstrap.servers": b.bootstrap})
            admin.delete_topics([TOPIC], operation_timeout=30)[TOPIC].result(timeout=60)
            b.process.kill()  # before the bucket could be reached
        finally:
            seaweedfs.start()
        b.process.restart()  # the killed one is gone: starts it on the same port
        wait_until(
            lambda: not old_keys & set(b.objects(TOPIC)),
            timeout=60,
            what="the deleted topic's objects to leave the bucket after the restart",
        )
        recreate_and_check(b, old_keys)
