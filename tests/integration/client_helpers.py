"""Client-side steps the integration tests repeat: producing values and reading a partition back,
draining a confluent-kafka consumer, whole round trips (create, produce, read back) with
confluent-kafka, aiokafka and kcat, a SASL login's librdkafka settings, and a broker certificate
for a TLS listener."""

from __future__ import annotations

import ssl
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme
from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def sasl_conf(
    bootstrap: str, mechanism: str, user: str, password: str, **more: Any
) -> dict[str, Any]:
    """librdkafka settings of a SASL_PLAINTEXT login (``more``: other properties)."""
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        **more,
    }


def recent_timestamp_ms() -> int:
    """A record timestamp for tests that set their own: an hour ago, in whole seconds. It lies
    inside the default retention.ms (7 days) of a long-lived broker, so a retention check
    between the produce and the read cannot delete the records (as it would for a fixed date
    long past), and inside every timestamp window's default."""
    return (int(time.time()) - 3600) * 1000


def take(consumer: Consumer, n: int, timeout: float = 30) -> list[Message]:
    """Up to ``n`` messages (fewer once ``timeout`` passes); any error message fails."""
    got: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        for m in consumer.consume(min(1000, n - len(got)), 0.5):
            assert m.error() is None, m.error()
            got.append(m)
    return got


def produce_values(bootstrap: str, topic: str, *values: bytes, partition: int = 0) -> None:
    """Produce ``values`` to one partition and wait for every acknowledgement."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for value in values:
        producer.produce(topic, value, partition=partition)
    assert producer.flush(15) == 0


def read_partition(bootstrap: str, topic: str, partition: int = 0) -> list[bytes]:
    """Every value of one partition from offset 0 (until 3 s without any); an error fails."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    got: list[bytes] = []
    try:
        while batch := consumer.consume(100, timeout=3):
            for m in batch:
                assert m.error() is None, m.error()
                got.append(m.value())
    finally:
        consumer.close()
    return got


def confluent_round_trip(conf: dict[str, Any], topic: str, n: int, partitions: int = 1) -> None:
    """With ``conf``: create ``topic``, produce n keyed values, read them back in a consumer
    group (FindCoordinator, the group protocol, a commit) and check every value came once, in
    order per partition."""
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(20)
    producer = Producer({**conf, "linger.ms": 5})
    values = [f"{topic}-{i}".encode() for i in range(n)]
    for i, v in enumerate(values):
        producer.produce(topic, key=str(i % 7).encode(), value=v)
    assert producer.flush(20) == 0
    consumer = Consumer({**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        got = take(consumer, n)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(m.value() or b"" for m in got) == sorted(values)
    for p in range(partitions):
        mine = [m.value() or b"" for m in got if m.partition() == p]
        kept = set(mine)
        assert mine == [v for v in values if v in kept]  # produce order kept


def aiokafka_round_trip(common: dict[str, Any], topic: str, values: list[bytes]) -> list[bytes]:
    """With aiokafka (``common``: its connection keywords): produce ``values`` to partition 0
    of ``topic`` and read the partition back from the beginning."""
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka import TopicPartition as ATopicPartition

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**common)
        await producer.start()
        try:
            for v in values:
                await producer.send(topic, value=v, partition=0)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(**common)
        await consumer.start()
        got: list[bytes] = []
        try:
            consumer.assign([ATopicPartition(topic, 0)])
            await consumer.seek_to_beginning()
            deadline = time.monotonic() + 30
            while len(got) < len(values) and time.monotonic() < deadline:
                for msgs in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend(m.value or b"" for m in msgs)
        finally:
            await consumer.stop()
        return got

    return asyncio.run(run())


def kcat_round_trip(
    bootstrap: str,
    options: Sequence[str],
    topic: str,
    lines: list[str],
    produce_options: Sequence[str] = (),
    consume_options: Sequence[str] = (),
) -> None:
    """Produce ``lines`` with Debian's kcat (``options`` on both sides, e.g. ``-X
    security.protocol=SSL``) and check that kcat reads exactly them back from the beginning."""
    produced = subprocess.run(
        ["kcat", "-b", bootstrap, *options, "-P", "-t", topic, *produce_options],
        input="\n".join(lines) + "\n",
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert produced.returncode == 0, produced.stderr
    consume = ["-C", "-t", topic, "-e", "-o", "beginning", *consume_options]
    consumed = subprocess.run(
        ["kcat", "-b", bootstrap, *options, *consume],
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == lines


def kafka_python_round_trip(common: dict[str, Any], topic: str, values: list[bytes]) -> list[bytes]:
    """With kafka-python (``common``: its connection keywords): produce ``values`` to
    partition 0 of ``topic`` and read the partition back from the beginning."""
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTopicPartition

    producer = KafkaProducer(linger_ms=5, **common)
    for v in values:
        producer.send(topic, value=v, partition=0)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(consumer_timeout_ms=5000, **common)
    consumer.assign([KTopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    got = [m.value for m in consumer]
    consumer.close()
    return got


@dataclass(frozen=True)
class BrokerCertificate:
    keystore: Path  # the broker's key and certificate chain (ssl.keystore.location)
    cafile: Path  # the CA that signed it, for clients (ssl.ca.location, a PEM truststore)
    client: ssl.SSLContext  # a client context trusting that CA


def broker_certificate(directory: Path, host: str = "127.0.0.1") -> BrokerCertificate:
    """A fresh CA and a certificate for ``host`` issued by it, written to ``directory``."""
    ca = trustme.CA()
    keystore, cafile = directory / "broker.pem", directory / "ca.pem"
    ca.issue_cert(host).private_key_and_cert_chain_pem.write_to_path(str(keystore))
    ca.cert_pem.write_to_path(str(cafile))
    client = ssl.create_default_context()
    ca.configure_trust(client)
    return BrokerCertificate(keystore, cafile, client)
