"""ListOffsets -3 (max timestamp) on a tiered partition after DeleteRecords into a segment only
the bucket holds, past the record with the greatest timestamp: as Kafka's MAX_TIMESTAMP counts
a local segment's records below the log start offset, the bucket's segment answers that
record. It answered offset -1, as if the partition were empty."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import recent_timestamp_ms

pytestmark = pytest.mark.integration

TOPIC = "lo-tiers"
COUNT = 60  # one ~270-byte batch each: 15 per 4 KiB segment
MAX_AT = 5  # the record with the greatest timestamp, in the first segment
EARLIEST_LOCAL = -4


def earliest_local(port: int) -> int:
    """ListOffsets -4 (v8 in Kafka; confluent-kafka's OffsetSpec has no earliest_local)."""
    part = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": EARLIEST_LOCAL}
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": TOPIC, "partitions": [part]}],
    }
    return int(request(port, 2, 7, body)["topics"][0]["partitions"][0]["offset"])


CONFIGS = (
    "remote.log.manager.task.interval.ms=200",
    "log.retention.check.interval.ms=200",
    "log.segment.delete.delay.ms=0",
)


def test_max_timestamp_below_the_log_start_in_the_bucket(tmp_path: Path) -> None:
    args = [a for c in CONFIGS for a in ("--config", c)]
    with BrokerProcess(tmp_path / "data", extra_args=args) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        tiered = {"remote.storage.enable": "true", "segment.bytes": "4096"}
        tiered["local.retention.ms"] = "1000"
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=tiered)])[TOPIC].result(10)
        base = recent_timestamp_ms() - 3_600_000
        greatest = base + 600_000
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        for i in range(COUNT):
            ts = greatest if i == MAX_AT else base + i * 1000
            producer.produce(TOPIC, b"v" * 200, timestamp=ts)
            producer.flush(10)
        tp = TopicPartition(TOPIC, 0)

        def offset(spec: OffsetSpec) -> tuple[int, int]:
            info = admin.list_offsets({tp: spec})[tp].result(10)
            return info.offset, info.timestamp

        deadline = time.monotonic() + 30
        while earliest_local(broker.port) < 30:  # the first segments are only in the bucket
            assert time.monotonic() < deadline, "local retention did not delete uploaded segments"
            time.sleep(0.2)
        assert offset(OffsetSpec.max_timestamp()) == (MAX_AT, greatest)

        admin.delete_records([TopicPartition(TOPIC, 0, MAX_AT + 3)])[tp].result(10)
        assert offset(OffsetSpec.earliest())[0] == MAX_AT + 3
        assert offset(OffsetSpec.max_timestamp()) == (MAX_AT, greatest)
