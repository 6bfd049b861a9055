"""A read_committed Fetch lists the aborted transactions of the offsets it returns, as Kafka
bounds them by the fetch's upper bound offset: every aborted transaction up to the last stable
offset was listed (and the whole list scanned) per fetch, 100 entries with a 1 KB answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import FETCH, BrokerProcess, request
from tiered_mq.record.batch import iter_batches

pytestmark = pytest.mark.integration

TXNS = 200  # one record each, aborted when odd


def _fetch(offset: int, max_bytes: int) -> dict[str, object]:
    partition = {"partition": 0, "fetch_offset": offset, "partition_max_bytes": max_bytes}
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "isolation_level": 1,
        "topics": [{"topic": "tx", "partitions": [partition]}],
    }


def test_read_committed_lists_the_aborted_transactions_of_what_it_returns(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("tx", 1, 1)])["tx"].result(10)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "t"})
        producer.init_transactions(10)
        for i in range(TXNS):  # transaction i: its record at 2i, its marker at 2i + 1
            producer.begin_transaction()
            producer.produce("tx", b"%d" % i, partition=0)
            producer.flush(10)
            (producer.abort_transaction if i % 2 else producer.commit_transaction)(10)
        for offset in (0, 101):
            answer = request(broker.port, FETCH, 11, _fetch(offset, 1000))
            part = answer["responses"][0]["partitions"][0]
            batches = [h for _, h in iter_batches(bytes(part["records"]))]
            base, end = batches[0].base_offset, batches[-1].last_offset + 1
            aborted = [t["first_offset"] for t in part["aborted_transactions"]]
            assert 2 < end - base < 50  # a few transactions of the 200
            assert aborted == [o for o in range(base, end) if o % 4 == 2]  # those it returns
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "rc",
                "isolation.level": "read_committed",
                "fetch.max.bytes": 1000,
                "max.partition.fetch.bytes": 1000,
                "message.max.bytes": 1000,
            }
        )
        consumer.assign([TopicPartition("tx", 0, 0)])
        values: list[bytes] = []
        while len(values) < TXNS // 2:
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            values.append(message.value())
        consumer.close()
        assert values == [b"%d" % i for i in range(0, TXNS, 2)]
