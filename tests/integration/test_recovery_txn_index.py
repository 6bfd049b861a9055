"""A ``.txnindex`` whose tail was zeroed (appended without fsync, then a power failure; or a
hand edit) decodes as an aborted transaction of producer id 0 at offset 0. Recovery drops
every entry that does not name an ABORT marker of its producer, so a read_committed consumer
still sees the committed records of the broker's first transactional producer (id 0)."""

from __future__ import annotations

import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

TIMEOUT = 20


def _read_committed(bootstrap: str, topic: str) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    try:
        while batch := c.consume(100, timeout=3):
            for m in batch:
                assert m.error() is None, m.error()
                values.append(m.value())
    finally:
        c.close()
    return values


def test_a_zeroed_txn_index_tail_hides_no_committed_record(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(TIMEOUT)
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "tx"})
    p.init_transactions(TIMEOUT)
    for value, commit in [(b"aborted", False), (b"committed", True)]:
        p.begin_transaction()
        p.produce("t", value, partition=0)
        p.flush(TIMEOUT)
        (p.commit_transaction if commit else p.abort_transaction)(TIMEOUT)
    assert _read_committed(broker.bootstrap, "t") == [b"committed"]
    broker.stop()
    index = Path(broker.data_dir) / "t-0" / "00000000000000000000.txnindex"
    with open(index, "ab") as f:  # one zeroed entry (34 bytes)
        f.write(bytes(34))

    for _ in range(2):  # the second start gives the same answer
        broker.start()
        assert _read_committed(broker.bootstrap, "t") == [b"committed"]
        broker.stop()
