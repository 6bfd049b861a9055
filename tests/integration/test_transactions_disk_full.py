"""Transactions committed while the disk is full, caused for real.

The broker's data directory is a tmpfs with few inodes. A transactional producer writes to a
topic whose segment is due to roll (``segment.ms``); then every free inode is taken, so the
COMMIT marker, whose append must create the next segment's files, fails with ENOSPC, while the
``PrepareCommit`` record still fits in the transaction log's existing segment. The commit is
decided once PrepareCommit is logged, so, as in Kafka, the producer's commit succeeds and the
coordinator retries the marker in the background. Once inodes are freed a user sees: the
records in read_committed (the last stable offset moves on), and a new instance of the
producer starting (InitProducerId is answered CONCURRENT_TRANSACTIONS, retried, until the
transaction is complete). Before the fix the commit failed with KAFKA_STORAGE_ERROR, the
transaction stayed PrepareCommit until a broker restart, the records were never readable and
the transactional id could not be initialized again.

When the transaction log itself cannot be written (its segment must roll: tiny
``transaction.state.log.segment.bytes``), EndTxn is answered NOT_COORDINATOR, as Kafka's
TransactionStateManager maps a storage error, and librdkafka finds the coordinator and retries
until inodes are freed; before, KAFKA_STORAGE_ERROR made the commit fail (an abortable error).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_transactions import TIMEOUT, _read_all
from tests.integration.tmpfs import mounted_tmpfs

pytestmark = pytest.mark.integration

INODES = 3000
SEGMENT_MS = 3000  # the topic's segment is due to roll when the transaction commits
RECORDS = 10


@pytest.fixture
def few_inodes(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs with INODES inodes (root only: CI runs as root)."""
    with mounted_tmpfs(tmp_path / "disk", f"size=256m,nr_inodes={INODES}") as mount:
        yield mount


def _take_every_inode(directory: Path) -> list[Path]:
    directory.mkdir()
    taken: list[Path] = []
    while True:
        path = directory / str(len(taken))
        try:
            path.touch()
        except OSError:
            return taken
        taken.append(path)


def _broker(data_dir: Path, *configs: str) -> BrokerProcess:
    small = ["offsets.topic.num.partitions=5", "transaction.state.log.num.partitions=5", *configs]
    return BrokerProcess(data_dir, extra_args=[a for c in small for a in ("--config", c)])


def test_commit_whose_marker_fails_completes_once_the_disk_recovers(few_inodes: Path) -> None:
    with _broker(few_inodes / "data") as broker:
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "transactional.id": "tx", "linger.ms": 0}
        )
        producer.init_transactions(TIMEOUT)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic = NewTopic("t", 1, 1, config={"segment.ms": str(SEGMENT_MS)})
        created = time.monotonic()
        admin.create_topics([topic])["t"].result(TIMEOUT)
        producer.begin_transaction()
        for i in range(RECORDS):
            producer.produce("t", f"v{i}".encode(), partition=0)
        assert producer.flush(TIMEOUT) == 0
        ballast = _take_every_inode(few_inodes / "ballast")
        assert time.monotonic() - created < SEGMENT_MS / 1000, "too slow: the segment rolled"
        time.sleep(max(0.0, created + SEGMENT_MS / 1000 + 0.5 - time.monotonic()))

        producer.commit_transaction(TIMEOUT)  # decided: PrepareCommit is logged

        for path in ballast:
            path.unlink()
        values = _read_all(broker.bootstrap, "t", "read_committed", RECORDS, partitions=1)
        assert values == [f"v{i}".encode() for i in range(RECORDS)]
        restarted = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "tx"})
        restarted.init_transactions(TIMEOUT)
        restarted.begin_transaction()
        restarted.produce("t", b"next", partition=0)
        restarted.commit_transaction(TIMEOUT)
        values = _read_all(broker.bootstrap, "t", "read_committed", RECORDS + 1, partitions=1)
        assert values[-1] == b"next"


def test_commit_is_retried_while_the_transaction_log_cannot_be_written(few_inodes: Path) -> None:
    with _broker(few_inodes / "data", "transaction.state.log.segment.bytes=200") as broker:
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "transactional.id": "tx", "linger.ms": 0}
        )
        producer.init_transactions(TIMEOUT)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("t", 1, 1)])["t"].result(TIMEOUT)
        producer.begin_transaction()
        for i in range(RECORDS):
            producer.produce("t", f"v{i}".encode(), partition=0)
        assert producer.flush(TIMEOUT) == 0
        ballast = _take_every_inode(few_inodes / "ballast")
        freed = threading.Timer(3.0, lambda: [path.unlink() for path in ballast])
        freed.start()
        try:
            producer.commit_transaction(TIMEOUT)  # retried until PrepareCommit is logged
        finally:
            freed.join()
        values = _read_all(broker.bootstrap, "t", "read_committed", RECORDS, partitions=1)
        assert values == [f"v{i}".encode() for i in range(RECORDS)]
