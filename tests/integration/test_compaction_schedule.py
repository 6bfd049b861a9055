"""When a running broker compacts a topic, with confluent-kafka (librdkafka).

- ``max.compaction.lag.ms`` on a rarely written table topic (the default ``segment.ms`` of a
  week, a ``min.cleanable.dirty.ratio`` its few updates never reach): the active segment is
  rolled once it is older than the lag and the cleaner compacts it whatever the ratio, so a
  reader from offset 0 soon sees only the latest value of each key (Kafka, KIP-354). The
  topic stays idle meanwhile: the broker's maintenance roll, not an append, seals it;
- a compacted topic deleted and created again under the same name is compacted from its
  first offset: duplicates of keys that are never written again do not stay.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

CLEANER_ARGS = ["--config", "log.cleaner.backoff.ms=200"]


def read_from_start(bootstrap: str, topic: str) -> list[tuple[int, bytes | None]]:
    """(offset, key) of every record from offset 0 up to the high watermark."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "auto.offset.reset": "error"}
    )
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[tuple[int, bytes | None]] = []
        deadline = time.monotonic() + 20
        while (not out or out[-1][0] < high - 1) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert not msg.error(), msg.error()
                out.append((msg.offset(), msg.key()))
        return out
    finally:
        consumer.close()


def wait_until_keys_are_unique(bootstrap: str, topic: str, timeout: float) -> float:
    """Seconds until a reader sees each key once; fails after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        keys = [key for _, key in read_from_start(bootstrap, topic)]
        if keys and len(keys) == len(set(keys)):
            return time.monotonic() - start
        time.sleep(0.3)
    raise AssertionError(f"{topic}: still {len(keys)} records for {len(set(keys))} keys")


def produce(bootstrap: str, topic: str, pairs: list[tuple[bytes, bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 2000})
    for key, value in pairs:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(15) == 0


def test_max_compaction_lag_compacts_an_idle_topic(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(extra_args=CLEANER_ARGS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = "table"
    configs = {
        "cleanup.policy": "compact",
        "min.cleanable.dirty.ratio": "0.9",
        "max.compaction.lag.ms": "3000",
    }
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)
    produce(broker.bootstrap, topic, [(b"k%d" % (i % 4), b"first-%d" % i) for i in range(40)])
    wait_until_keys_are_unique(broker.bootstrap, topic, timeout=20)  # all dirty: ratio 1
    updates = [(b"k%d" % (i % 4), b"update-%d" % i) for i in range(8)]
    produce(broker.bootstrap, topic, updates)  # a little dirt, far below the ratio
    assert len(read_from_start(broker.bootstrap, topic)) == 12
    waited = wait_until_keys_are_unique(broker.bootstrap, topic, timeout=20)
    assert waited >= 1.0  # not before the lag (3 s from the updates)
    assert read_from_start(broker.bootstrap, topic) == [(44 + i, b"k%d" % i) for i in range(4)]


def test_a_recreated_topic_is_compacted_from_its_first_offset(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(extra_args=CLEANER_ARGS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = "recreated"
    configs = {"cleanup.policy": "compact", "segment.bytes": "4096"}
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)
    produce(broker.bootstrap, topic, [(b"k%d" % (i % 5), b"x" * 30) for i in range(400)])
    deadline = time.monotonic() + 20  # cleaned up to its active segment
    while len(read_from_start(broker.bootstrap, topic)) > 100 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert len(read_from_start(broker.bootstrap, topic)) <= 100
    admin.delete_topics([topic])[topic].result(15)
    deadline = time.monotonic() + 15
    while True:  # creation fails while the deletion is still in progress
        try:
            admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
    # keys written only at the start of the new log, below the old log's cleaned offsets
    pairs = [(b"once%d" % (i % 4), b"v%d" % i) for i in range(100)]
    pairs += [(b"k%d" % (i % 5), b"y" * 30) for i in range(400)]
    produce(broker.bootstrap, topic, pairs)
    produce(broker.bootstrap, topic, [(b"last", b"z" * 3000)])  # rolls the last k batch away

    def once_records() -> int:
        seen = read_from_start(broker.bootstrap, topic)
        return sum(1 for _, key in seen if key is not None and key.startswith(b"once"))

    deadline = time.monotonic() + 20
    while once_records() != 4 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert once_records() == 4
