"""A consume-transform-produce pipeline stays exactly-once while the broker is SIGKILLed.

The pipeline (a thread here, confluent-kafka) reads ``src`` in a group with read_committed and,
for every batch, writes the transformed records to ``dst`` and the group's new positions in
one transaction; meanwhile the test SIGKILLs and restarts the broker three times. The loop
handles errors the way librdkafka documents: a retriable commit is retried, an abortable one is
aborted and the consumer rewinds to its committed offsets. A fatal error fails the test.

The producer sets ``metadata.recovery.strategy=none``. With librdkafka's default
(``rebootstrap``, KIP-1102) a client that loses every broker decommissions them; the group
coordinator it cached stays decommissioned and ``send_offsets_to_transaction`` then hangs past
its timeout (librdkafka issues #5511 and #5456, open). A one-broker cluster loses every broker at
each kill, so it meets that client bug at once.

A user's check afterwards: read_committed sees every input transformed exactly once in ``dst``
and the group's committed offsets are at the end of ``src``.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from tests.integration.conftest import BrokerFactory
from tests.integration.test_transactions import TIMEOUT, _read_all, _topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARTITIONS = 3
INPUTS = 3000
BATCH = 50


class Pipeline:
    """The consume-transform-produce loop; ``run`` returns when the group's committed offsets
    cover every input, or raises on a fatal error."""

    def __init__(self, bootstrap: str, src: str, dst: str) -> None:
        self.src, self.dst = src, dst
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"eos-{uuid.uuid4().hex[:6]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 30_000,
            }
        )
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "transactional.id": f"eos-{uuid.uuid4().hex[:6]}",
                "transaction.timeout.ms": 60_000,
                "linger.ms": 2,
                "reconnect.backoff.max.ms": 200,
                "metadata.recovery.strategy": "none",  # see the module docstring
            }
        )
        self.committed_transactions = 0
        self.aborts = 0
        self.done = threading.Event()

    def run(self) -> None:
        self.producer.init_transactions(60)
        self.consumer.subscribe([self.src])
        try:
            while not self._caught_up():
                batch = [m for m in self.consumer.consume(BATCH, 0.5) if self._usable(m)]
                if batch:
                    self._process(batch)
                    time.sleep(0.01)  # spread the work over the broker kills
        finally:
            self.consumer.close()
            self.done.set()

    @staticmethod
    def _usable(m: Message) -> bool:
        error = m.error()
        if error is None:
            return True
        if error.fatal():
            raise KafkaException(error)
        return False  # transport errors while the broker is down

    def _process(self, batch: list[Message]) -> None:
        self.producer.begin_transaction()
        try:
            for m in batch:
                value = b"out-" + (m.value() or b"")
                self.producer.produce(self.dst, value, partition=m.partition())
            positions = self.consumer.position(self.consumer.assignment())
            metadata = self.consumer.consumer_group_metadata()
            self.producer.send_offsets_to_transaction(positions, metadata, 20)
            self._commit()
        except KafkaException as e:
            error: KafkaError = e.args[0]
            if not error.txn_requires_abort():
                raise
            self.producer.abort_transaction(60)
            self.aborts += 1
            self._rewind()

    def _commit(self) -> None:
        while True:
            try:
                self.producer.commit_transaction(60)
                self.committed_transactions += 1
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise
                time.sleep(0.1)

    def _rewind(self) -> None:
        """After an abort, go back to the committed positions: the aborted batch is redone."""
        assignment = self.consumer.assignment()
        for tp in self.consumer.committed(assignment, 60):
            self.consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))

    def _caught_up(self) -> bool:
        assignment = self.consumer.assignment()
        if len(assignment) < PARTITIONS:
            return False
        try:
            committed = self.consumer.committed(assignment, 10)
        except KafkaException:
            return False  # the broker is down
        return sum(max(tp.offset, 0) for tp in committed) == INPUTS


def test_exactly_once_pipeline_survives_broker_sigkills(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(extra_args=["--config", "segment.bytes=30000"])
    src, dst = _topic(broker.bootstrap, PARTITIONS), _topic(broker.bootstrap, PARTITIONS)
    plain = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(INPUTS):
        plain.produce(src, str(i).encode(), partition=i % PARTITIONS)
    assert plain.flush(TIMEOUT) == 0

    pipeline = Pipeline(broker.bootstrap, src, dst)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            pipeline.run()
        except BaseException as e:
            failure.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        for kill in range(1, 4):
            deadline = time.monotonic() + 120
            while pipeline.committed_transactions < kill * INPUTS // BATCH // 5:
                assert not pipeline.done.is_set(), f"pipeline stopped: {failure}"
                assert time.monotonic() < deadline, "pipeline made no progress"
                time.sleep(0.05)
            broker.restart(sig=9)
    finally:
        thread.join(240)
    assert not thread.is_alive(), "pipeline did not finish"
    assert failure == []
    out = _read_all(broker.bootstrap, dst, "read_committed", INPUTS, PARTITIONS)
    assert len(out) == INPUTS, f"{len(out)} outputs for {INPUTS} inputs"
    assert sorted(out) == sorted(f"out-{i}".encode() for i in range(INPUTS))
