"""A bucket that stops answering (SeaweedFS frozen with SIGSTOP) does not hold fetches: a cold
read waits at most ``remote.fetch.max.wait.ms`` (Kafka's DelayedRemoteFetch), the partition is
answered without records, a consumer's hot partition keeps flowing on the same connection, and
once the bucket answers again the consumer reads every cold record, in order, once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, message, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COLD, HOT = "cold", "hot"
RECORDS = 1500


def test_a_hung_bucket_does_not_hold_fetches(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(COLD, **{"local.retention.bytes": "1"})
        b.produce(COLD, 0, RECORDS)
        wait_until(lambda: len(b.local_segments(COLD)) == 1, what="segments in the bucket")
        local_start = int(b.local_segments(COLD)[0].stem)
        assert local_start > 0
        b.process.restart()  # an empty chunk cache: the next cold read goes to the bucket
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        conf = {"remote.storage.enable": "false"}
        admin.create_topics([NewTopic(HOT, 1, 1, config=conf)])[HOT].result(10)
        producer = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
        for i in range(100):
            producer.produce(HOT, f"hot-{i}".encode())
        assert producer.flush(10) == 0

        consumer = Consumer(
            {"bootstrap.servers": b.bootstrap, "group.id": "hung", "enable.auto.commit": False}
        )
        got: dict[str, list[bytes]] = {COLD: [], HOT: []}

        def poll_until(done: float) -> None:
            while time.monotonic() < done and len(got[HOT]) < 100:
                m = consumer.poll(0.2)
                if m is not None and m.error() is None:
                    got[m.topic()].append(m.value())

        with seaweedfs.hung():
            started = time.monotonic()
            answer = b.fetch(COLD, 0)
            assert time.monotonic() - started < 5  # 500 ms by default, not the S3 timeouts
            assert answer["error_code"] == 0 and not answer["records"]

            consumer.assign([TopicPartition(COLD, 0, 0), TopicPartition(HOT, 0, 0)])
            started = time.monotonic()
            poll_until(started + 20)
            took = time.monotonic() - started
            assert len(got[HOT]) == 100, f"hot records held behind the hung bucket: {got[HOT]}"
            assert took < 10, took
            assert got[COLD] == []  # nothing of the cold partition came: the bucket is hung
            assert b.metric("tiered_mq_remote_fetch_expired_total") >= 1
            assert "remote.fetch.max.wait.ms" in b.process.log_tail(100)

        deadline = time.monotonic() + 60
        while len(got[COLD]) < RECORDS and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                got[m.topic()].append(m.value())
        consumer.close()
        assert got[COLD] == [message(i)[1] for i in range(RECORDS)]
        assert got[HOT] == [f"hot-{i}".encode() for i in range(100)]
