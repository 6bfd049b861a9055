"""A compacted log under endless overwrites stays bounded (confluent-kafka, real broker).

- the same 10 keys overwritten round after round (small segments, ``segment.ms`` rolling the
  active segment once the round is written, a short cleaner backoff): once the cleaner has
  caught up, the log holds the latest value of each key and at most one empty batch per
  segment (the end of a cleaned group); after one more record and the pass that merges the
  whole log into one group, it is the same every round: one segment of the 10 records and at
  most one empty batch. The old cleaner copied every empty batch unchanged in every later pass
  (a batch "kept all of its 0 records"), so they piled up: 14 -> 29 -> 44 -> 59 -> 74 -> 90
  in a bug hunt's run;
- the producer snapshots of that log (one per roll) are deleted with the segments the cleaner
  replaces: there are never more than segments, and after a restart the idempotent producer's
  state is still there. The old broker deleted them only below the local log start offset,
  which never moves on a compacted topic (a bug hunt counted 543 snapshots for 47 segments).
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, stored_batches
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

KEYS = 10
CLEANER_ARGS = ["--config", "log.cleaner.backoff.ms=200"]
TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "segment.bytes": "4096",
    "segment.ms": "1000",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
}


def produce_round(producer: Producer, topic: str, round_: int, writes: int) -> dict[bytes, bytes]:
    latest: dict[bytes, bytes] = {}
    for i in range(writes):
        key, value = f"key-{i % KEYS}".encode(), f"r{round_}-{i:05d}-{'v' * 80}".encode()
        producer.produce(topic, key=key, value=value)
        latest[key] = value
        if i % KEYS == KEYS - 1:  # small batches: many per segment
            assert producer.flush(15) == 0
    assert producer.flush(15) == 0
    return latest


Figure = tuple[int, int, int, int]  # bytes, batches, empty batches, segment files


def compacted(
    broker: BrokerProcess, topic: str, latest: dict[bytes, bytes], at: dict[bytes, int]
) -> Figure | None:
    """The log's figures once it holds exactly the latest record of each key (``at``: the
    offsets some of them must have); None before."""
    batches = stored_batches(broker.port, topic, 0)
    records = [r for _, rs in batches for r in rs]
    view = {r.key: r.value for r in records}
    if len(records) != KEYS or view != latest:
        return None
    if any(r.offset != at[r.key] for r in records if r.key in at):
        return None
    empty = sum(1 for h, _ in batches if h.records_count == 0)
    segments = len(list((broker.data_dir / f"{topic}-0").glob("*.log")))
    return sum(h.size for h, _ in batches), len(batches), empty, segments


def wait_compacted(
    broker: BrokerProcess, topic: str, latest: dict[bytes, bytes], at: dict[bytes, int]
) -> Figure:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        figure = compacted(broker, topic, latest, at)
        if figure is not None:
            return figure
        time.sleep(0.3)
    raise AssertionError(f"not compacted in 60 s: {stored_batches(broker.port, topic, 0)}")


def compacted_topic(broker_factory: BrokerFactory, topic: str) -> tuple[BrokerProcess, Producer]:
    """A broker with a short cleaner backoff, ``topic`` (one partition, TOPIC_CONFIGS) and an
    idempotent producer sending each message as it comes."""
    broker: BrokerProcess = broker_factory(extra_args=CLEANER_ARGS)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=TOPIC_CONFIGS)])[topic].result(15)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "enable.idempotence": True}
    )
    return broker, producer


def test_overwritten_keys_reach_a_steady_log_size(broker_factory: BrokerFactory) -> None:
    topic = "overwritten"
    broker, producer = compacted_topic(broker_factory, topic)
    settled: list[Figure] = []
    offsets: list[int] = []
    for round_ in range(6):
        latest = produce_round(producer, topic, round_, 1000)
        # segment.ms rolls the round's last segment, the cleaner then cleans it: the dirty
        # segments of a pass are groups of their own, each ending with at most one empty batch
        size, batches, empty, segments = wait_compacted(broker, topic, latest, {})
        assert empty <= segments, (round_, size, batches, empty, segments)
        # one more record (key-0 again, same value): the next pass groups the whole log into
        # one segment, whatever the earlier passes left; its empty batches go
        offsets.clear()
        producer.produce(
            topic,
            key=b"key-0",
            value=latest[b"key-0"],
            on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()),
        )
        assert producer.flush(15) == 0 and offsets[0] >= 0
        settled.append(wait_compacted(broker, topic, latest, {b"key-0": offsets[0]}))
    # the settled log is the same every round: one segment holding the 10 latest records
    # and at most one empty batch (its group's end), and the empty active segment
    one_record_batches = sum(61 + 30 + len(value) for value in latest.values())
    for size, batches, empty, segments in settled:
        assert segments == 2 and empty <= 1 and batches <= KEYS + 1, settled
        assert size <= one_record_batches + 61, settled


def test_producer_snapshots_stay_bounded_by_the_segments(broker_factory: BrokerFactory) -> None:
    topic = "snapshots"
    broker, producer = compacted_topic(broker_factory, topic)
    dir = broker.data_dir / f"{topic}-0"

    def counts() -> tuple[int, int]:
        names = [p.name for p in dir.iterdir()]  # one listing: the same moment for both
        return sum(n.endswith(".log") for n in names), sum(n.endswith(".snapshot") for n in names)

    rounds = 4
    for round_ in range(rounds):
        latest = produce_round(producer, topic, round_, 1000)
        wait_compacted(broker, topic, latest, {})
        segments, snapshots = counts()
        assert snapshots <= segments, (round_, segments, snapshots)
    broker.restart()
    segments, snapshots = counts()
    assert snapshots <= segments + 1, (segments, snapshots)  # + the one at the log end
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    latest = produce_round(producer, topic, rounds, 100)
    wait_compacted(broker, topic, latest, {})
    segments, snapshots = counts()
    assert snapshots <= segments, (segments, snapshots)
