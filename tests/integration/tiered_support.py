"""Helpers of the tiered-storage integration tests (test_tiered_*.py): a `tiered-mq dev` broker
on a SeaweedFS bucket, deterministic messages, manifest and metric probes, waits.

Messages are a pure function of their offset (``message(i)``), so every consumer's output can
be compared byte for byte with what was produced, and nothing may be missing or duplicated.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, exchange, free_port, request
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, SegmentState, parse_partition_manifest
from tiered_mq.cold.object_store import open_sync_store

PREFIX = "tmq"
SEGMENT_BYTES = 64 * 1024
LIST_OFFSETS = 2
FETCH = 1

# CreateTime of message 0 (two hours ago, inside the default retention); message i is i s later
BASE_TS = (int(time.time()) - 7200) * 1000


def message(i: int) -> tuple[bytes, bytes]:
    """(key, value) of the message at offset ``i``: ~200 ASCII bytes, distinct per offset."""
    body = f"{i:08d}|" + "".join(chr(97 + (i * 7 + j) % 26) for j in range(191))
    return f"key-{i}".encode(), body.encode()


def broker_args(seaweedfs: SeaweedFS, bucket: str, metrics_port: int, *configs: str) -> list[str]:
    args = [
        "--cold-url",
        f"s3://{bucket}/{PREFIX}",
        "--s3-endpoint",
        seaweedfs.endpoint_url,
        "--s3-region",
        "us-east-1",
        "--metrics-port",
        str(metrics_port),
    ]
    defaults = [
        "remote.log.manager.task.interval.ms=200",
        "remote.log.manager.task.retry.backoff.ms=200",
        "remote.log.manager.task.retry.backoff.max.ms=1000",
        "log.retention.check.interval.ms=200",
        "log.segment.delete.delay.ms=0",
        f"segment.bytes={SEGMENT_BYTES}",
    ]
    for item in [*defaults, *configs]:
        args += ["--config", item]
    return args


S3_ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


class TieredBroker:
    """A started BrokerProcess on a fresh bucket, with probes of its tiering state."""

    def __init__(
        self,
        tmp_path: Path,
        seaweedfs: SeaweedFS,
        *configs: str,
        name: str = "broker",
    ) -> None:
        self.seaweedfs = seaweedfs
        self.bucket = seaweedfs.new_bucket()
        self.metrics_port = free_port()
        self.process = BrokerProcess(
            tmp_path / name,
            extra_args=broker_args(seaweedfs, self.bucket, self.metrics_port, *configs),
            env=S3_ENV,
        )
        self.store = open_sync_store(f"s3://{self.bucket}", **seaweedfs.store_options())

    def __enter__(self) -> TieredBroker:
        self.process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.stop()
        self.store.close()

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    # ---- admin and data -------------------------------------------------------------------

    def create_topic(self, topic: str, **configs: str) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        conf = {"remote.storage.enable": "true", **configs}
        futures = admin.create_topics([NewTopic(topic, 1, 1, config=conf)])
        futures[topic].result(timeout=10)

    def produce(self, topic: str, start: int, count: int, base_ts: int | None = None) -> None:
        """Messages ``start .. start + count - 1`` (offsets equal to their index), message i
        with CreateTime ``base_ts + i`` seconds (``BASE_TS`` by default)."""
        base = BASE_TS if base_ts is None else base_ts
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "linger.ms": 5,
                "batch.size": 16384,
                "enable.idempotence": True,
            }
        )
        failed: list[object] = []

        def delivered(err: object, _msg: object) -> None:
            if err is not None:
                failed.append(err)

        for i in range(start, start + count):
            key, value = message(i)
            producer.produce(
                topic,
                value=value,
                key=key,
                partition=0,
                timestamp=base + i * 1000,
                on_delivery=delivered,
            )
            if i % 1000 == 0:
                producer.poll(0)
        assert producer.flush(30) == 0
        assert not failed, failed[:3]

    def list_offset(self, topic: str, timestamp: int) -> tuple[int, int]:
        """(error_code, offset) of ListOffsets v5 for partition 0."""
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": timestamp}]}
            ],
        }
        answer = request(self.process.port, LIST_OFFSETS, 5, body)
        part = answer["topics"][0]["partitions"][0]
        return int(part["error_code"]), int(part["offset"])

    def fetch(
        self,
        topic: str,
        offset: int,
        max_bytes: int = 1 << 20,
        partition_max_bytes: int = 0,
        sock: socket.socket | None = None,
    ) -> dict[str, Any]:
        """One Fetch v11 of partition 0 at ``offset`` (no long poll) on a fresh connection or
        ``sock``; the partition's limit is ``max_bytes`` unless ``partition_max_bytes`` is
        given."""
        body = {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 0,
            "max_bytes": max_bytes,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [
                        {
                            "partition": 0,
                            "current_leader_epoch": -1,
                            "fetch_offset": offset,
                            "log_start_offset": -1,
                            "partition_max_bytes": partition_max_bytes or max_bytes,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        if sock is None:
            answer = request(self.process.port, FETCH, 11, body, timeout=30)
        else:
            answer = exchange(sock, FETCH, 11, body)
        return dict(answer["responses"][0]["partitions"][0])

    # ---- probes -----------------------------------------------------------------------------

    def manifest(self, topic: str) -> PartitionManifest | None:
        try:
            data, _ = self.store.get(layout.manifest_key(PREFIX, topic, 0))
        except Exception:
            return None
        return parse_partition_manifest(data)

    def remote_segments(self, topic: str) -> list[Any]:
        m = self.manifest(topic)
        return [] if m is None else m.readable_segments()

    def objects(self, topic: str) -> list[str]:
        return [o.key for o in self.store.list(layout.topic_prefix(PREFIX, topic))]

    def local_segments(self, topic: str) -> list[Path]:
        return sorted((self.process.data_dir / f"{topic}-0").glob("*.log"))

    def metrics(self) -> dict[str, float]:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def metric(self, name: str, topic: str | None = None) -> float:
        key = name if topic is None else f'{name}{{partition="0",topic="{topic}"}}'
        return self.metrics().get(key, 0.0)


def wait_until(condition: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def check_manifest(manifest: PartitionManifest) -> None:
    """Readable segments contiguous from the log start, no offset twice, no copy unfinished."""
    readable = manifest.readable_segments()
    for a, b in itertools.pairwise(readable):
        assert b.base_offset == a.end_offset + 1, (a, b)
    bases = [s.base_offset for s in manifest.segments]
    assert len(bases) == len(set(bases)), f"duplicate segments: {bases}"
    assert not [s for s in manifest.segments if s.state == SegmentState.COPY_STARTED]


def dump(obj: Any) -> str:
    return json.dumps(obj, default=str)[:2000]
