"""ListOffsets answers, for an offset only the bucket holds, the leader epoch its batch was
written in (Kafka's leader epoch cache covers the tiered log; a found record answers its
batch's partitionLeaderEpoch): after another tool's election (the state znode with the next
epoch) the earliest offset, a timestamp found in the bucket, the max timestamp and the latest
tiered offset answered the new epoch, the latest offset rightly answers it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import recent_timestamp_ms
from tests.integration.test_broker_zookeeper import SESSION_MS
from tests.integration.test_broker_zookeeper_other_tools import chroot, zk  # noqa: F401
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (the fixture)
from tiered_mq.coordination import znodes
from tiered_mq.protocol.api_versions import ApiKey

pytestmark = pytest.mark.integration

TOPIC = "lo-epochs"
COUNT = 60  # one ~270-byte batch each: 15 per 4 KiB segment
MAX_AT = 5


def answer(port: int, timestamp: int) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) of a raw ListOffsets v7 for partition 0."""
    part = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp}
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": TOPIC, "partitions": [part]}],
    }
    p = request(port, ApiKey.LIST_OFFSETS, 7, body)["topics"][0]["partitions"][0]
    assert p["error_code"] == 0, p
    return p["offset"], p["timestamp"], p["leader_epoch"]


def wait_for(check: object, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_bucket_offsets_answer_their_batch_epoch(
    tmp_path: Path,
    chroot: str,  # noqa: F811
    zk: KazooClient,  # noqa: F811
) -> None:
    configs = [
        f"zookeeper.connect={chroot}",
        f"zookeeper.session.timeout.ms={SESSION_MS}",
        "broker.id=0",
        "remote.log.manager.task.interval.ms=200",
        "log.retention.check.interval.ms=200",
        "log.segment.delete.delay.ms=0",
    ]
    with BrokerProcess(
        tmp_path / "data", extra_args=[a for c in configs for a in ("--config", c)]
    ) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        tiered = {"remote.storage.enable": "true", "segment.bytes": "4096"}
        tiered["local.retention.ms"] = "1000"
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=tiered)])[TOPIC].result(15)
        base = recent_timestamp_ms() - 3_600_000
        greatest = base + 600_000
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        for i in range(COUNT):
            producer.produce(
                TOPIC, b"v" * 200, timestamp=greatest if i == MAX_AT else base + i * 1000
            )
            producer.flush(10)
        wait_for(lambda: answer(broker.port, -4)[0] >= 45, "local retention of uploaded segments")

        path = znodes.partition_state(TOPIC, 0)
        state = json.loads(zk.get(path)[0])
        zk.set(path, json.dumps({**state, "leader_epoch": state["leader_epoch"] + 1}).encode())
        new_epoch = state["leader_epoch"] + 1
        wait_for(lambda: answer(broker.port, -1)[2] == new_epoch, "the broker to take the epoch")
        old_epoch = state["leader_epoch"]

        assert answer(broker.port, -2) == (0, -1, old_epoch)
        assert answer(broker.port, base + 2000) == (2, base + 2000, old_epoch)
        assert answer(broker.port, -3) == (MAX_AT, greatest, old_epoch)
        tiered_end = answer(broker.port, -5)
        assert tiered_end[0] >= 44 and tiered_end[2] == old_epoch
        assert answer(broker.port, -1) == (COUNT, -1, new_epoch)
