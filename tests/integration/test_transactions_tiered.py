"""read_committed over the cold tier after a restart: aborted transactions come from the
bucket's ``.txnindex`` objects.

A transactional producer commits and aborts transactions spanning several small segments;
once those segments are uploaded to the (file://) bucket and deleted from local disk, the
broker restarts (SIGTERM), so it has no local ``.txnindex`` and no in-memory entry for them.
A read_committed consumer from offset 0 must still see exactly the committed records, and a
read_uncommitted one all of them.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.conftest import BrokerFactory
from tests.integration.test_transactions import _read_all
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import parse_partition_manifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import ObjectNotFoundError

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIMEOUT = 30
CONFIGS = [
    "segment.bytes=16384",
    "remote.log.manager.task.interval.ms=200",
    "remote.log.manager.task.retry.backoff.ms=200",
    "log.retention.check.interval.ms=200",
    "log.segment.delete.delay.ms=0",
]


def _high_watermark(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw"})
    try:
        return int(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)[1])
    finally:
        c.close()


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_read_committed_from_the_bucket_after_restart(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(extra_args=[a for c in CONFIGS for a in ("--config", c)])
    topic = f"txn-tiered-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    conf = {"remote.storage.enable": "true", "local.retention.bytes": "1"}
    admin.create_topics([NewTopic(topic, 1, 1, config=conf)])[topic].result(TIMEOUT)

    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": f"t-{uuid.uuid4().hex[:6]}",
            "linger.ms": 5,
            "batch.size": 4096,
        }
    )
    producer.init_transactions(TIMEOUT)
    committed: list[bytes] = []
    every: list[bytes] = []
    pad = b"x" * 300
    for t in range(8):
        producer.begin_transaction()
        values = [f"t{t}-{i}|".encode() + pad for i in range(60)]  # ~20 KB: spans segments
        for v in values:
            producer.produce(topic, value=v, partition=0)
        every += values
        if t % 2:
            assert producer.flush(TIMEOUT) == 0  # abort_transaction drops unsent messages
            producer.abort_transaction(TIMEOUT)
        else:
            producer.commit_transaction(TIMEOUT)
            committed += values
    last_abort_end = _high_watermark(broker.bootstrap, topic)
    producer.begin_transaction()  # a committed tail: the aborted ones' segments roll
    tail = [f"tail-{i}|".encode() + pad for i in range(150)]
    for v in tail:
        producer.produce(topic, value=v, partition=0)
    producer.commit_transaction(TIMEOUT)
    committed += tail
    every += tail

    store = open_sync_store(f"file://{broker.data_dir / 'cold'}")
    key = layout.manifest_key("", topic, 0)

    def uploaded() -> bool:
        try:
            data, _ = store.get(key)
        except ObjectNotFoundError:
            return False
        manifest = parse_partition_manifest(data)
        with_index = [s for s in manifest.readable_segments() if s.key(layout.TXN_INDEX)]
        return manifest.next_offset() >= last_abort_end and len(with_index) >= 2

    def deleted_locally() -> bool:
        logs = sorted((broker.data_dir / f"{topic}-0").glob("*.log"))
        return bool(logs) and int(logs[0].name.split(".")[0]) >= last_abort_end

    _wait(uploaded, "uploads of the aborted transactions' segments")
    _wait(deleted_locally, "local deletion of the uploaded segments")
    broker.restart()

    assert (
        _read_all(broker.bootstrap, topic, "read_committed", len(committed), partitions=1)
        == committed
    )
    assert _read_all(broker.bootstrap, topic, "read_uncommitted", len(every), partitions=1) == every
