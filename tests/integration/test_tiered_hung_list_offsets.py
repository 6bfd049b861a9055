"""A bucket that stops answering (SeaweedFS frozen with SIGSTOP) does not hold timestamp lookups:
a ListOffsets of a cold timestamp waits at most ``remote.list.offsets.request.timeout.ms``
(Kafka's DelayedRemoteListOffsets, KIP-1075) and that partition answers REQUEST_TIMED_OUT, a hot
partition in the same request and another client's lookup are answered, and once the bucket
answers again the same lookup (a librdkafka client's ``offsets_for_times``) finds the offset."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import request
from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import (
    BASE_TS,
    LIST_OFFSETS,
    TieredBroker,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COLD, HOT = "cold", "hot"
RECORDS = 1500
TIMEOUT_MS = 1000
TARGET = 10  # an offset whose record is only in the bucket
REQUEST_TIMED_OUT = 7
HOT_BASE_TS = BASE_TS + 10_000_000  # hot record i: HOT_BASE_TS + i s


def list_offsets(port: int, *asked: tuple[str, int]) -> dict[str, tuple[int, int]]:
    """ListOffsets v5 (no timeout_ms: the broker's config bounds it) of partition 0 of each
    (topic, timestamp), in one request: topic -> (error_code, offset)."""
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": ts}]}
            for topic, ts in asked
        ],
    }
    answer = request(port, LIST_OFFSETS, 5, body, timeout=120)
    out = {}
    for t in answer["topics"]:
        part = t["partitions"][0]
        out[t["name"]] = (int(part["error_code"]), int(part["offset"]))
    return out


def consumer(bootstrap: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": "lookups"})


def test_a_hung_bucket_times_out_cold_timestamp_lookups(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    timeout_config = f"remote.list.offsets.request.timeout.ms={TIMEOUT_MS}"
    with TieredBroker(tmp_path, seaweedfs, timeout_config) as b:
        b.create_topic(COLD, **{"local.retention.bytes": "1"})
        b.produce(COLD, 0, RECORDS)
        wait_until(lambda: len(b.local_segments(COLD)) == 1, what="segments in the bucket")
        assert int(b.local_segments(COLD)[0].stem) > TARGET
        cold_ts = BASE_TS + TARGET * 1000
        b.process.restart()  # empty manifest and index caches: the lookup goes to the bucket
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        conf = {"remote.storage.enable": "false"}
        admin.create_topics([NewTopic(HOT, 1, 1, config=conf)])[HOT].result(10)
        producer = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
        for i in range(100):
            producer.produce(HOT, f"hot-{i}".encode(), timestamp=HOT_BASE_TS + i * 1000)
        assert producer.flush(10) == 0
        del producer, admin  # closed before the broker stops: no reconnect noise
        hot_ts = HOT_BASE_TS + 40 * 1000

        with seaweedfs.hung():
            started = time.monotonic()
            got = list_offsets(b.process.port, (COLD, cold_ts), (HOT, hot_ts))
            took = time.monotonic() - started
            # the bound, not the S3 client's timeouts and retries (30 s and more)
            assert TIMEOUT_MS / 1000 * 0.9 <= took < TIMEOUT_MS / 1000 + 3, took
            assert got == {COLD: (REQUEST_TIMED_OUT, -1), HOT: (0, 40)}

            # a librdkafka client's lookup of the cold timestamp, and meanwhile another's of
            # the hot one: the second is answered at once
            outcome: dict[str, Any] = {}

            def cold_lookup() -> None:
                c = consumer(b.bootstrap)
                started = time.monotonic()
                try:
                    outcome["offsets"] = c.offsets_for_times(
                        [TopicPartition(COLD, 0, cold_ts)], timeout=4
                    )
                except KafkaException as e:
                    outcome["error"] = e.args[0]
                outcome["took"] = time.monotonic() - started
                c.close()

            worker = threading.Thread(target=cold_lookup)
            hot_client = consumer(b.bootstrap)
            hot_client.list_topics(timeout=10)  # connected before the cold lookup starts
            worker.start()
            time.sleep(0.3)
            started = time.monotonic()
            [found] = hot_client.offsets_for_times([TopicPartition(HOT, 0, hot_ts)], timeout=10)
            took = time.monotonic() - started
            assert found.error is None and found.offset == 40
            assert took < 0.5, f"the hot lookup waited {took:.2f} s behind the cold one"
            worker.join(30)
            # librdkafka retries REQUEST_TIMED_OUT within the call's timeout, then reports it
            assert "offsets" not in outcome, outcome
            assert outcome["error"].code() == KafkaError.REQUEST_TIMED_OUT, outcome
            assert outcome["took"] < 4 + 2, outcome
            assert b.metric("tiered_mq_remote_list_offsets_expired_total") >= 2
            assert "remote.list.offsets.request.timeout.ms" in b.process.log_tail(100)

        # the bucket answers again: the same lookup finds the record (the client retries
        # REQUEST_TIMED_OUT and joins the lookup still in flight)
        c = consumer(b.bootstrap)
        [found] = c.offsets_for_times([TopicPartition(COLD, 0, cold_ts)], timeout=60)
        assert found.error is None and found.offset == TARGET
        assert list_offsets(b.process.port, (COLD, cold_ts)) == {COLD: (0, TARGET)}
        c.close()
        hot_client.close()
