"""Per-topic remote-storage metrics (Kafka's KIP-405 BrokerTopicMetrics: RemoteCopy*,
RemoteFetch*, RemoteDelete*, RemoteLogSizeBytes, RemoteLogMetadataCount) on the /metrics
endpoint of a broker tiering to a SeaweedFS bucket, driven by confluent-kafka: each topic's
uploads, reads, read failures (an object lost from the bucket) and retention deletions count
under its own label, summing to the broker-wide totals, and a deleted topic's series go and
stay gone (a read ending after the deletion: tests/unit/cold/test_topic_remote_metrics.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import TieredBroker, wait_until
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

P = "tiered_mq_topic_remote_"


def per_topic(samples: dict[str, float], name: str, topic: str) -> float:
    return samples.get(f'{P}{name}{{topic="{topic}"}}', 0.0)


def summed(samples: dict[str, float], name: str) -> float:
    return sum(v for k, v in samples.items() if k.startswith(f"{P}{name}{{"))


def series_of(samples: dict[str, float], topic: str) -> list[str]:
    """Every remote series (per topic or per partition) labelled with ``topic``."""
    return [
        k
        for k in samples
        if k.startswith(("tiered_mq_topic_remote_", "tiered_mq_remote_"))
        and f'topic="{topic}"' in k
    ]


def tiered_away(b: TieredBroker, topic: str) -> PartitionManifest:
    """Waits until ``topic``'s rolled segments are in the bucket and its size is published."""
    wait_until(
        lambda: len(b.local_segments(topic)) == 1 and b.remote_segments(topic),
        what=f"{topic}'s segments to move to the bucket",
    )

    def published() -> PartitionManifest | None:
        m = b.manifest(topic)
        samples = b.metrics()
        if m is None or per_topic(samples, "log_segments", topic) != len(m.readable_segments()):
            return None
        return m

    manifest: PartitionManifest = wait_until(published, what=f"{topic}'s remote log size")
    return manifest


def consume(bootstrap: str, topic: str, count: int) -> int:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "remote-metrics", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    try:
        while got < count:
            batch = consumer.consume(500, timeout=10)
            assert batch, f"stalled at {got}"
            for m in batch:
                assert m.error() is None, m.error()
                got += 1
    finally:
        consumer.close()
    return got


def test_remote_work_counts_per_topic_and_a_deleted_topics_series_go(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic("reads", **{"local.retention.bytes": "1"})
        b.create_topic("idle", **{"local.retention.bytes": "1"})
        b.produce("reads", 0, 1500)
        b.produce("idle", 0, 700)
        reads, idle = tiered_away(b, "reads"), tiered_away(b, "idle")

        # copies (RemoteCopy*) and the bucket's contents (RemoteLogSizeBytes, ...MetadataCount)
        samples = b.metrics()
        for topic, manifest in (("reads", reads), ("idle", idle)):
            segments = manifest.readable_segments()
            assert per_topic(samples, "upload_segments_total", topic) == len(segments)
            assert per_topic(samples, "upload_bytes_total", topic) >= manifest.size_bytes()
            assert per_topic(samples, "upload_errors_total", topic) == 0
            assert per_topic(samples, "log_bytes", topic) == manifest.size_bytes()
            assert per_topic(samples, "log_segments", topic) == len(segments)
        for name in ("upload_segments", "upload_bytes"):
            assert summed(samples, f"{name}_total") == samples[f"tiered_mq_remote_{name}_total"]

        # reads (RemoteFetch*): a consumer from offset 0 reads "reads" from the bucket
        assert consume(b.bootstrap, "reads", 1500) == 1500
        samples = b.metrics()
        assert per_topic(samples, "fetch_requests_total", "reads") > 0
        assert per_topic(samples, "fetch_bytes_total", "reads") >= reads.size_bytes() * 0.9
        assert per_topic(samples, "fetch_requests_total", "idle") == 0
        assert per_topic(samples, "fetch_bytes_total", "idle") == 0
        for name in ("fetch_requests", "fetch_bytes"):
            assert summed(samples, f"{name}_total") == samples[f"tiered_mq_remote_{name}_total"]

        # a read failure (RemoteFetchErrorsPerSec): an object of idle's first segment is lost
        log_key = idle.readable_segments()[0].key(layout.LOG)
        assert log_key is not None
        b.store.delete(log_key)
        assert b.fetch("idle", 0)["error_code"] != 0
        samples = b.metrics()
        assert per_topic(samples, "fetch_errors_total", "idle") >= 1
        assert per_topic(samples, "fetch_errors_total", "reads") == 0

        # retention (RemoteDelete*): old records of "reads" expire from the bucket
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        b.create_topic("expiring", **{"retention.ms": "600000", "local.retention.bytes": "1"})
        b.produce("expiring", 0, 1500)  # CreateTime two hours ago: past retention.ms
        b.produce("expiring", 1500, 700, base_ts=(int(time.time()) - 1500) * 1000)
        wait_until(
            lambda: per_topic(b.metrics(), "delete_segments_total", "expiring") > 0,
            what="remote retention of expiring",
        )
        samples = b.metrics()
        assert per_topic(samples, "delete_segments_total", "reads") == 0
        assert (
            summed(samples, "delete_segments_total")
            == (samples["tiered_mq_remote_delete_segments_total"])
        )
        assert per_topic(samples, "delete_errors_total", "expiring") == 0

        # a deleted topic's series go, and stay gone; the other topics' stay
        assert series_of(samples, "reads")
        admin.delete_topics(["reads"])["reads"].result(timeout=20)
        wait_until(lambda: not series_of(b.metrics(), "reads"), what="reads' series to go")
        time.sleep(1.0)  # five uploader passes
        samples = b.metrics()
        assert series_of(samples, "reads") == []
        assert per_topic(samples, "log_segments", "idle") == len(idle.readable_segments())
