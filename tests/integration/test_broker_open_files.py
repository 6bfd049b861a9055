"""A broker started under a low soft open files limit (a shell's 1024; 256 here) hosts more
partitions than that limit, as a Kafka broker does (its JVM raises the soft limit to the hard
one): the topic is created, every partition takes a record, and the broker starts again with
them all. Before, the creation failed with KAFKA_STORAGE_ERROR (Too many open files) and the
next start stopped at the first log it could not open. Driven with confluent-kafka."""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

SOFT_LIMIT = 256
PARTITIONS = 400  # a file each at least, beyond SOFT_LIMIT
TOPIC = "wide"


@contextlib.contextmanager
def soft_open_files_limit(limit: int) -> Iterator[None]:
    """Processes started meanwhile inherit the soft limit ``limit`` (the hard one unchanged)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_more_partitions_than_the_soft_open_files_limit(tmp_path: Path) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard > 4 * PARTITIONS, "needs a higher hard limit"
    with contextlib.ExitStack() as stack:
        with soft_open_files_limit(SOFT_LIMIT):
            broker = stack.enter_context(BrokerProcess(tmp_path / "data"))
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        created = admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], operation_timeout=60)
        created[TOPIC].result(timeout=90)

        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 100})
        failures: list[str] = []
        for p in range(PARTITIONS):
            producer.produce(
                TOPIC,
                value=str(p).encode(),
                partition=p,
                on_delivery=lambda err, _msg: err is None or failures.append(str(err)),
            )
        assert producer.flush(60) == 0 and failures == []

        broker.stop()
        with soft_open_files_limit(SOFT_LIMIT):
            broker.start()
        consumer = Consumer(
            {"bootstrap.servers": broker.bootstrap, "group.id": "wide", "enable.auto.commit": False}
        )
        try:
            consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
            values: set[bytes] = set()
            for _ in range(60):
                for message in consumer.consume(PARTITIONS, 1.0):
                    assert message.error() is None, message.error()
                    values.add(message.value())
                if len(values) == PARTITIONS:
                    break
        finally:
            consumer.close()
        assert values == {str(p).encode() for p in range(PARTITIONS)}
