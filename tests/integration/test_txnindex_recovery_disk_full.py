"""An aborted transaction whose ``.txnindex`` entry could not be written stays aborted across
a restart, the fault caused for real.

The broker's data directory is a tmpfs with few inodes. A transactional producer writes to a
topic (its segment already holds committed transactions, so its ``.log`` and index files exist,
but no ``.txnindex``); then every free inode is taken and the producer aborts. The ABORT marker
fits in the existing ``.log``, but the segment's ``.txnindex`` cannot be created (ENOSPC): the
marker write is answered KAFKA_STORAGE_ERROR and the aborted transaction is known in memory only.
Inodes are freed, more committed transactions roll the segment, and the broker restarts (cleanly,
or killed with SIGKILL). A user then checks with a read_committed consumer: none of the aborted
records, every committed one. Before the fix recovery replayed the log only from the newest
producer snapshot (the roll's, or the clean shutdown's), past the ABORT marker, and never
rebuilt the missing entry: the aborted records were delivered as committed.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.test_transactions import TIMEOUT, _read_all
from tests.integration.test_transactions_disk_full import _broker, _take_every_inode
from tests.integration.tmpfs import mounted_tmpfs

pytestmark = pytest.mark.integration

SEGMENT_BYTES = 4096  # a few committed transactions roll the segment
ABORTED = [f"aborted-{i}".encode() for i in range(5)]


@pytest.fixture
def few_inodes(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "disk", "size=256m,nr_inodes=3000") as mount:
        yield mount


def _commit(producer: Producer, values: list[bytes]) -> None:
    producer.begin_transaction()
    for value in values:
        producer.produce("t", value, partition=0)
    producer.commit_transaction(TIMEOUT)


def _segments(data_dir: Path) -> list[str]:
    return sorted(p.name for p in (data_dir / "t-0").glob("*.log"))


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "killed"])
def test_abort_whose_txn_index_write_failed_stays_aborted_after_roll_and_restart(
    few_inodes: Path, stop_signal: int
) -> None:
    data_dir = few_inodes / "data"
    with _broker(data_dir) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic = NewTopic("t", 1, 1, config={"segment.bytes": str(SEGMENT_BYTES)})
        admin.create_topics([topic])["t"].result(TIMEOUT)
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "transactional.id": "tx", "linger.ms": 0}
        )
        producer.init_transactions(TIMEOUT)
        committed = [b"before"]
        _commit(producer, committed)
        producer.begin_transaction()
        for value in ABORTED:
            producer.produce("t", value, partition=0)
        assert producer.flush(TIMEOUT) == 0
        assert not (data_dir / "t-0" / "00000000000000000000.txnindex").exists()

        ballast = _take_every_inode(few_inodes / "ballast")
        producer.abort_transaction(TIMEOUT)  # PrepareAbort logged; the marker's index fails
        assert not (data_dir / "t-0" / "00000000000000000000.txnindex").exists()
        for path in ballast:
            path.unlink()

        # the broker's memory filters the aborted records
        assert _read_all(broker.bootstrap, "t", "read_committed", 1, partitions=1) == committed
        first_segments = _segments(data_dir)
        n = 0
        while _segments(data_dir) == first_segments:  # committed transactions roll the segment
            values = [f"after-{n}-{i}".encode() + bytes(200) for i in range(5)]
            _commit(producer, values)
            committed += values
            n += 1
        _commit(producer, [b"last"])
        committed.append(b"last")
        producer.flush(TIMEOUT)
        del producer

        broker.stop(stop_signal)
        broker.start()
        values = _read_all(broker.bootstrap, "t", "read_committed", len(committed), partitions=1)
        assert values == committed
        everything = _read_all(broker.bootstrap, "t", "read_uncommitted", partitions=1)
        assert set(ABORTED) <= set(everything)  # the aborted records are in the log
