"""The Go client Sarama (Debian's golang-github-shopify-sarama-dev 1.22) against `tiered-mq dev`.

A small Go program (``sarama_client/main.go``, built once per module with Debian's Go in GOPATH
mode) produces, consumes one partition, or runs a consumer group, and prints JSON; these tests
check what a user would: every message back once, with its key, value, headers and timestamp, at
dense offsets, in the partition Sarama's hash partitioner chose, readable by confluent-kafka too
(and the other way round), and a consumer group that resumes where it committed.

Sarama 1.22 does not read ApiVersions: it derives each request version from ``Config.Version``
(2.1.0 here). It sends Produce v3, Fetch v4, ListOffsets v1, Metadata v5, FindCoordinator v0,
JoinGroup v1, SyncGroup/Heartbeat/LeaveGroup v0, OffsetFetch v1, InitProducerId v0, and
OffsetCommit v1 (its default, ``Consumer.Offsets.Retention`` 0) or v2 (a retention set). It
can therefore not produce zstd (Kafka requires Produce v7 for it), which is checked as an
error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, stored_batches
from tests.integration.client_helpers import recent_timestamp_ms
from tests.integration.test_broker_clients import consume_all, new_topic

pytestmark = pytest.mark.integration

SOURCE = Path(__file__).parent / "sarama_client"
DEBIAN_GOPATH = Path("/usr/share/gocode")
SARAMA_SOURCE = DEBIAN_GOPATH / "src/github.com/Shopify/sarama"
SARAMA_CODECS = ["none", "gzip", "snappy", "lz4"]  # zstd: see test_sarama_zstd_produce_refused
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
UNSUPPORTED_COMPRESSION_TYPE = (
    "The requesting client does not support the compression type of given partition"
)

Json = dict[str, Any]


@pytest.fixture(scope="module")
def sarama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sarama_client binary, built from main.go with Debian's Go and Sarama."""
    go = shutil.which("go")
    if go is None or not SARAMA_SOURCE.is_dir():
        pytest.skip("needs golang-go and golang-github-shopify-sarama-dev (scripts/setup.sh)")
    work = tmp_path_factory.mktemp("sarama-build")
    binary = work / "sarama_client"
    env = {
        **os.environ,
        "GO111MODULE": "off",  # Debian ships Go libraries as GOPATH sources, not modules
        "GOPATH": f"{DEBIAN_GOPATH}:{work / 'gopath'}",
        "GOCACHE": str(work / "gocache"),
        "GOFLAGS": "",
        "CGO_ENABLED": "1",  # Sarama's zstd is the cgo binding to libzstd
    }
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=SOURCE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, f"go build failed:\n{built.stderr}"
    return binary


def run_sarama(
    binary: Path, broker: BrokerProcess, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run one sarama_client subcommand (with Sarama's log on stderr) against ``broker``."""
    command, *rest = args
    return subprocess.run(
        [str(binary), command, "-brokers", broker.bootstrap, "-v", "-timeout", "30s", *rest],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sarama_json(binary: Path, broker: BrokerProcess, *args: str) -> Json:
    """Run a subcommand that must succeed and return its JSON answer."""
    done = run_sarama(binary, broker, *args)
    stderr = "\n".join(done.stderr.splitlines()[-40:])
    assert done.returncode == 0, (
        f"sarama_client {' '.join(args)} failed:\n{stderr}\n--- broker log ---\n"
        f"{broker.log_tail(20)}"
    )
    answer: Json = json.loads(done.stdout)
    return answer


def produce(binary: Path, broker: BrokerProcess, topic: str, n: int, *flags: str) -> list[Json]:
    return list(
        sarama_json(binary, broker, "produce", "-topic", topic, "-n", str(n), *flags)["messages"]
    )


def consume(
    binary: Path, broker: BrokerProcess, topic: str, partition: int, n: int, offset: int = -2
) -> Json:
    args = ["-topic", topic, "-partition", str(partition), "-n", str(n), "-offset", str(offset)]
    return sarama_json(binary, broker, "consume", *args)


def sarama_partition(key: str, partitions: int) -> int:
    """Sarama 1.22's default hash partitioner: FNV-1a 32, as int32, modulo, then made positive."""
    h = 0x811C9DC5
    for b in key.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return abs(signed) % partitions  # Go's % truncates toward zero; Sarama negates a negative


def committed_by_confluent(
    broker: BrokerProcess, group: str, topic: str, partitions: int
) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 10)
        return {tp.partition: tp.offset for tp in tps}
    finally:
        consumer.close()


def expected_value(prefix: str, i: int, size: int = 0) -> str:
    value = f"{prefix}-{i}"
    return value + "x" * max(0, size - len(value))


# ------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("codec", SARAMA_CODECS)
def test_sarama_codec_round_trip(sarama: Path, shared_broker: BrokerProcess, codec: str) -> None:
    """Produced by Sarama with ``codec``; stored compressed with it; read back by Sarama and by
    confluent-kafka with the same offsets, keys, values, headers and timestamps."""
    n, size = 500, 200
    topic = new_topic(shared_broker)
    before_ms = int(time.time() * 1000)
    flags = ["-codec", codec, "-keys", "7", "-prefix", codec, "-value-size", str(size)]
    sent = produce(sarama, shared_broker, topic, n, *flags)
    after_ms = int(time.time() * 1000)
    assert [m["offset"] for m in sent] == list(range(n))  # acks in order, dense
    assert {m["partition"] for m in sent} == {0}

    got = consume(sarama, shared_broker, topic, 0, n)
    assert got["high_water_mark"] == n
    msgs = got["messages"]
    assert [m["offset"] for m in msgs] == list(range(n))
    assert [m["value"] for m in msgs] == [expected_value(codec, i, size) for i in range(n)]
    assert [m["key"] for m in msgs] == [f"key-{i % 7}" for i in range(n)]
    assert [m["headers"] for m in msgs] == [{"i": str(i)} for i in range(n)]
    assert all(before_ms - 1000 <= m["timestamp_ms"] <= after_ms + 1000 for m in msgs)

    batches = stored_batches(shared_broker.port, topic, 0)
    assert {h.attributes & 0x7 for h, _ in batches} == {CODEC_IDS[codec]}
    assert sum(len(rs) for _, rs in batches) == n
    if codec != "none":  # batching happened, so compression had more than one record to pack
        assert len(batches) < n

    theirs = sorted(consume_all(shared_broker, topic, 1, n), key=lambda m: m.offset())
    assert len(theirs) == n
    assert [(m.offset(), m.key().decode(), m.value().decode()) for m in theirs] == [
        (m["offset"], m["key"], m["value"]) for m in msgs
    ]
    assert [m.headers() for m in theirs] == [[("i", str(i).encode())] for i in range(n)]
    assert [m.timestamp()[1] for m in theirs] == [m["timestamp_ms"] for m in msgs]


def test_sarama_zstd_produce_refused(sarama: Path, shared_broker: BrokerProcess) -> None:
    """Sarama 1.22 sends zstd batches in Produce v3; like Kafka, the broker refuses them
    (UNSUPPORTED_COMPRESSION_TYPE: zstd needs Produce v7) and stores nothing."""
    topic = new_topic(shared_broker)
    done = run_sarama(
        sarama, shared_broker, "produce", "-topic", topic, "-n", "5", "-codec", "zstd"
    )
    assert done.returncode == 1, done.stdout
    # the error line; Sarama's own log may still print its producer's shutdown after it
    assert UNSUPPORTED_COMPRESSION_TYPE in done.stderr, done.stderr
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "unused"})
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic, 0), 10) == (0, 0)
    finally:
        consumer.close()


def test_sarama_keys_hash_to_one_partition(sarama: Path, shared_broker: BrokerProcess) -> None:
    """Keyed messages on four partitions: each lands in the partition Sarama's hash partitioner
    picks for its key, and each partition holds its keys' messages in send order."""
    n, keys, parts = 600, 12, 4
    topic = new_topic(shared_broker, parts)
    sent = produce(sarama, shared_broker, topic, n, "-codec", "snappy", "-keys", str(keys))
    expected = {f"key-{k}": sarama_partition(f"key-{k}", parts) for k in range(keys)}
    assert len(set(expected.values())) > 1  # the keys do spread
    assert all(m["partition"] == expected[m["key"]] for m in sent)

    for p in range(parts):
        mine = [i for i in range(n) if expected[f"key-{i % keys}"] == p]
        if not mine:
            assert stored_batches(shared_broker.port, topic, p) == []
            continue
        got = consume(sarama, shared_broker, topic, p, len(mine))
        assert got["high_water_mark"] == len(mine)
        msgs = got["messages"]
        assert [m["offset"] for m in msgs] == list(range(len(mine)))
        assert [m["value"] for m in msgs] == [f"m-{i}" for i in mine]
        assert {m["key"] for m in msgs} == {k for k, kp in expected.items() if kp == p}
        assert [m["offset"] for m in sent if m["partition"] == p] == list(range(len(mine)))


def test_sarama_idempotent_producer(sarama: Path, shared_broker: BrokerProcess) -> None:
    """Idempotent (InitProducerId, then sequenced batches): every message stored exactly once,
    and the stored batches carry one producer id and gapless sequence numbers per partition."""
    n, parts = 300, 3
    topic = new_topic(shared_broker, parts)
    sent = produce(sarama, shared_broker, topic, n, "-idempotent", "-codec", "lz4", "-keys", "6")
    msgs = consume_all(shared_broker, topic, parts, n)
    values = sorted(m.value().decode() for m in msgs)
    assert values == sorted(f"m-{i}" for i in range(n))  # none lost, none twice
    producer_ids: set[int] = set()
    for p in range(parts):
        offsets = sorted(m.offset() for m in msgs if m.partition() == p)
        assert offsets == list(range(len(offsets)))
        assert sorted(m["offset"] for m in sent if m["partition"] == p) == offsets
        sequence = 0
        for header, records in stored_batches(shared_broker.port, topic, p):
            producer_ids.add(header.producer_id)
            assert header.producer_epoch == 0
            assert header.base_sequence == sequence
            sequence += len(records)
        assert sequence == len(offsets)
    assert len(producer_ids) == 1 and min(producer_ids) >= 0


@pytest.mark.parametrize("retention", ["0s", "24h"])  # OffsetCommit v1 (Sarama's default), v2
def test_sarama_consumer_group_resumes_after_commit(
    sarama: Path, shared_broker: BrokerProcess, retention: str
) -> None:
    """A Sarama ConsumerGroup takes 40 of 90 messages and commits; 30 more arrive (from
    confluent-kafka); a second run of the group takes exactly the 80 not yet taken, starting at
    the committed offsets. confluent-kafka reads the same committed offsets."""
    parts, group = 3, f"sarama-{time.monotonic_ns()}"
    topic = new_topic(shared_broker, parts)
    produce(sarama, shared_broker, topic, 90, "-keys", "9", "-prefix", "early")

    def run_group(n: int) -> Json:
        args = ["group", "-topic", topic, "-group", group, "-n", str(n), "-retention", retention]
        return sarama_json(sarama, shared_broker, *args)

    first = run_group(40)
    assert first["assigned"] == list(range(parts))
    taken1 = {int(p): ms for p, ms in first["messages"].items()}
    assert sum(len(ms) for ms in taken1.values()) == 40
    committed1: dict[int, int] = {}
    for p in range(parts):
        offsets = [m["offset"] for m in taken1.get(p, [])]
        assert offsets == list(range(len(offsets)))  # nothing committed before: from 0
        committed1[p] = len(offsets) if offsets else -1  # -1: nothing committed
    assert {int(p): o for p, o in first["committed"].items()} == committed1
    by_confluent = committed_by_confluent(shared_broker, group, topic, parts)
    assert by_confluent == {p: (o if o >= 0 else -1001) for p, o in committed1.items()}

    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 5})
    for i in range(30):
        producer.produce(topic, key=f"late-{i % 5}", value=f"late-{i}".encode())
    assert producer.flush(15) == 0

    second = run_group(80)
    taken2 = {int(p): ms for p, ms in second["messages"].items()}
    for p, ms in taken2.items():
        start = max(committed1[p], 0)
        assert [m["offset"] for m in ms] == list(range(start, start + len(ms)))
    values = [m["value"] for ms in (*taken1.values(), *taken2.values()) for m in ms]
    expected = [f"early-{i}" for i in range(90)] + [f"late-{i}" for i in range(30)]
    assert sorted(values) == sorted(expected)  # nothing lost, nothing delivered twice

    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "unused"})
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1] for p in range(parts)
        }
    finally:
        consumer.close()
    assert sum(ends.values()) == 120
    assert {int(p): o for p, o in second["committed"].items()} == ends
    assert committed_by_confluent(shared_broker, group, topic, parts) == ends


@pytest.mark.parametrize("codec", [*SARAMA_CODECS, "zstd"])
def test_sarama_reads_confluent_kafka_data(
    sarama: Path, shared_broker: BrokerProcess, codec: str
) -> None:
    """confluent-kafka produces (any codec, zstd included; null keys, headers, set timestamps);
    Sarama reads every record as written."""
    n, base_ts = 300, recent_timestamp_ms()
    topic = new_topic(shared_broker)
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "compression.type": codec, "linger.ms": 5}
    )
    keys = [None if i % 50 == 0 else f"k{i % 5}" for i in range(n)]
    for i in range(n):
        producer.produce(
            topic,
            key=keys[i],
            value=f"cf-{codec}-{i}".encode(),
            headers=[("n", str(i).encode())],
            timestamp=base_ts + i,
        )
    assert producer.flush(15) == 0

    got = consume(sarama, shared_broker, topic, 0, n)
    assert got["high_water_mark"] == n
    msgs = got["messages"]
    assert [m["offset"] for m in msgs] == list(range(n))
    assert [m["key"] for m in msgs] == keys
    assert [m["value"] for m in msgs] == [f"cf-{codec}-{i}" for i in range(n)]
    assert [m["headers"] for m in msgs] == [{"n": str(i)} for i in range(n)]
    assert [m["timestamp_ms"] for m in msgs] == [base_ts + i for i in range(n)]

    tail = consume(sarama, shared_broker, topic, 0, 10, offset=n - 10)  # a seek mid-batch
    assert [m["offset"] for m in tail["messages"]] == list(range(n - 10, n))
