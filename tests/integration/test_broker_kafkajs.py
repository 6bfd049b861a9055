"""KafkaJS (npm ``kafkajs`` 2.2.4, pure JavaScript) against a `tiered-mq dev` broker.

``kafkajs_client/client.js`` is a small CLI around KafkaJS (see its header); scripts/setup.sh
installs its locked dependencies with ``npm ci``. These tests check what a KafkaJS user would:
every message back exactly once with its key, value, headers and timestamp at dense offsets,
for plain and gzip batches (KafkaJS has no built-in snappy/lz4/zstd), also read by
confluent-kafka; keyed messages placed like Java's murmur2 partitioner (the same partition as
confluent-kafka's murmur2_random); an idempotent producer's batches stored with their producer
id and sequences, also through a broker restart; transactions (read_committed skips the
aborted one); consumer-group members that split six partitions between them and resume from
their commits (also after a SIGKILL, and across clients: KafkaJS and confluent-kafka share a
group's offsets); and KafkaJS reading what confluent-kafka produced, nulls and headers included.

KafkaJS reads ApiVersions (v2) and picks the highest version both sides support: Produce v7,
Fetch v11, ListOffsets v3, Metadata v6, OffsetCommit v5, OffsetFetch v4, FindCoordinator v2,
JoinGroup v5, Heartbeat v3, LeaveGroup v3, SyncGroup v3, DescribeGroups v2, CreateTopics v3,
InitProducerId v1, AddPartitionsToTxn v1, EndTxn v1. ``KAFKAJS_LOG_LEVEL=DEBUG`` in the
environment of client.js logs every request and response on stderr.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess, stored_batches
from tests.integration.client_helpers import recent_timestamp_ms, take

NODE = shutil.which("node")
CLIENT_DIR = Path(__file__).with_name("kafkajs_client")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/setup.sh installs it)"),
]

GZIP = 1


@pytest.fixture(scope="module", autouse=True)
def kafkajs_installed() -> None:
    installed = CLIENT_DIR / "node_modules" / "kafkajs" / "package.json"
    assert installed.is_file(), f"KafkaJS is not installed: run scripts/setup.sh ({CLIENT_DIR})"
    assert json.loads(installed.read_text())["version"] == "2.2.4"


@dataclass(frozen=True, order=True)
class Msg:
    """One consumed message as both clients report it (text; null stays None)."""

    partition: int
    offset: int
    key: str | None
    value: str | None
    headers: tuple[tuple[str, str | None], ...]
    timestamp: int


def _command(broker: BrokerProcess, *args: str) -> list[str]:
    assert NODE is not None
    return [NODE, str(CLIENT_DIR / "client.js"), *args, "--brokers", broker.bootstrap]


def _summary(args: Iterable[str], returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    assert returncode == 0, f"kafkajs {' '.join(args)} exited {returncode}:\n{stderr[-4000:]}"
    summary: dict[str, Any] = json.loads(stdout)
    return summary


def kafkajs(broker: BrokerProcess, *args: str, timeout: float = 60) -> dict[str, Any]:
    """Run one client.js command to completion and return its JSON summary."""
    done = subprocess.run(
        _command(broker, *args), capture_output=True, text=True, timeout=timeout, cwd=CLIENT_DIR
    )
    return _summary(args, done.returncode, done.stdout, done.stderr)


class Running:
    """A client.js command running in the background (a consumer-group member)."""

    def __init__(self, broker: BrokerProcess, *args: str) -> None:
        self.args = args
        self.proc = subprocess.Popen(
            _command(broker, *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=CLIENT_DIR,
        )

    def result(self, timeout: float = 60) -> dict[str, Any]:
        try:
            stdout, stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            stdout, stderr = self.proc.communicate()
            raise AssertionError(f"kafkajs {self.args} hung:\n{stderr[-4000:]}") from None
        return _summary(self.args, self.proc.returncode, stdout, stderr)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def new_topic(broker: BrokerProcess, partitions: int) -> str:
    topic = f"kjs-{uuid.uuid4().hex[:10]}"
    created = kafkajs(
        broker, "admin", "create-topic", "--topic", topic, "--partitions", str(partitions)
    )
    assert created == {"created": True}
    metadata = kafkajs(broker, "admin", "metadata", "--topic", topic)
    [described] = metadata["topics"]
    assert [p["partitionId"] for p in described["partitions"]] == list(range(partitions))
    assert all(p["partitionErrorCode"] == 0 and p["leader"] == 0 for p in described["partitions"])
    return topic


def consumed(summary: dict[str, Any]) -> list[Msg]:
    """The messages of a `consume` summary, in (partition, offset) order."""
    return sorted(
        Msg(
            int(partition),
            m["offset"],
            m["key"],
            m["value"],
            _headers(m["headers"]),
            m["timestamp"],
        )
        for partition, msgs in summary["messages"].items()
        for m in msgs
    )


def kafkajs_consume(
    broker: BrokerProcess, topic: str, group: str, n: int, *extra: str
) -> tuple[list[Msg], dict[str, Any]]:
    summary = kafkajs(broker, "consume", "--topic", topic, "--group", group, "--n", str(n), *extra)
    msgs = consumed(summary)
    assert summary["count"] == len(msgs) == n
    return msgs, summary


def confluent_read(
    broker: BrokerProcess,
    topic: str,
    partitions: int,
    expected: int,
    isolation: str = "read_committed",
) -> list[Msg]:
    """Everything in the topic read by confluent-kafka (manual assignment from offset 0)."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    try:
        got = [msg_of(m) for m in take(consumer, expected, timeout=20)]
        extra = consumer.consume(1000, 0.3)  # nothing beyond what was expected
        assert not extra, [(m.partition(), m.offset()) for m in extra]
    finally:
        consumer.close()
    return sorted(got)


def msg_of(m: Message) -> Msg:
    """A confluent-kafka message as a Msg."""
    partition, offset, headers = m.partition(), m.offset(), m.headers() or []
    assert partition is not None and offset is not None
    assert isinstance(headers, list)  # librdkafka returns a list of (name, bytes | None)
    pairs = [(k, v.decode() if isinstance(v, bytes) else v) for k, v in headers]
    return Msg(
        partition, offset, _text(m.key()), _text(m.value()), _headers(pairs), m.timestamp()[1]
    )


def _headers(pairs: Iterable[Sequence[Any]]) -> tuple[tuple[str, str | None], ...]:
    """(name, value) pairs sorted by name; a repeated name keeps its values' order."""
    return tuple(sorted(((str(k), v) for k, v in pairs), key=lambda pair: pair[0]))


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode()


def high_watermarks(broker: BrokerProcess, topic: str) -> dict[int, int]:
    answer = kafkajs(broker, "admin", "offsets", "--topic", topic)
    return {o["partition"]: int(o["high"]) for o in answer["topic"]}


def group_offsets(broker: BrokerProcess, topic: str, group: str) -> dict[int, int]:
    answer = kafkajs(broker, "admin", "offsets", "--topic", topic, "--group", group)
    [offsets] = answer["group"]
    assert offsets["topic"] == topic
    return {o["partition"]: int(o["offset"]) for o in offsets["partitions"]}


def assert_dense(msgs: list[Msg]) -> None:
    """Per partition, offsets run 0, 1, 2, ... with no gap and no repeat."""
    by_partition: dict[int, list[int]] = defaultdict(list)
    for m in sorted(msgs):
        by_partition[m.partition].append(m.offset)
    for partition, offsets in by_partition.items():
        assert offsets == list(range(len(offsets))), f"partition {partition}: {offsets}"


def values(msgs: list[Msg]) -> list[str]:
    """The values, sorted."""
    return sorted(str(m.value) for m in msgs)


# -- KafkaJS producer -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_kafkajs_round_trip(shared_broker: BrokerProcess, codec: str) -> None:
    """KafkaJS produces keyed messages in six send() calls and reads them back in a group;
    confluent-kafka reads exactly the same; each send() became one batch per partition,
    compressed as asked, at the base offset the Produce response reported."""
    n, keys, batch = 600, 13, 100
    topic = new_topic(shared_broker, 3)
    before = int(time.time() * 1000)
    produced = kafkajs(
        shared_broker,
        "produce",
        "--topic",
        topic,
        "--n",
        str(n),
        "--keys",
        str(keys),
        "--batch",
        str(batch),
        "--codec",
        codec,
    )
    after = int(time.time() * 1000) + 1
    assert produced["sent"] == n
    msgs, summary = kafkajs_consume(shared_broker, topic, f"g-{topic}", n, "--from-beginning")

    index = {m.value: int(str(m.value).rsplit("-", 1)[1]) for m in msgs}
    assert sorted(index.values()) == list(range(n))  # nothing lost, nothing twice
    for m in msgs:
        i = index[m.value]
        assert m.value == f"{topic}-{i}"
        assert m.key == f"key-{i % keys}"
        assert m.headers == (("seq", str(i)),)
        assert before <= m.timestamp <= after
    assert_dense(msgs)
    partitions_of_key: dict[str | None, set[int]] = defaultdict(set)
    for m in msgs:
        partitions_of_key[m.key].add(m.partition)
    assert all(len(ps) == 1 for ps in partitions_of_key.values())
    assert {m.partition for m in msgs} == {0, 1, 2}

    # Each send() is one batch per partition, at the base offset the broker answered.
    firsts: dict[tuple[int, int], int] = {}
    for m in msgs:
        send = index[m.value] // batch
        firsts[m.partition, send] = min(m.offset, firsts.get((m.partition, send), m.offset))
    for partition in range(3):
        starts = [firsts[p, s] for p, s in sorted(firsts) if p == partition]
        assert produced["partitions"][str(partition)]["baseOffsets"] == starts
        stored = stored_batches(shared_broker.port, topic, partition)
        assert [h.base_offset for h, _ in stored] == starts
        assert {h.compression for h, _ in stored} == {GZIP if codec == "gzip" else 0}

    counts = Counter(m.partition for m in msgs)
    assert high_watermarks(shared_broker, topic) == counts
    assert group_offsets(shared_broker, topic, f"g-{topic}") == counts
    assert {int(p): o for p, o in summary["committed"].items()} == counts
    assert confluent_read(shared_broker, topic, 3, n) == msgs


def test_kafkajs_keys_partitioned_like_java(shared_broker: BrokerProcess) -> None:
    """KafkaJS's default partitioner and librdkafka's murmur2_random (Java's algorithm) put
    every key in the same partition of a 6-partition topic."""
    keys = 40
    js_topic, c_topic = new_topic(shared_broker, 6), new_topic(shared_broker, 6)
    kafkajs(shared_broker, "produce", "--topic", js_topic, "--n", str(keys), "--keys", str(keys))
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "partitioner": "murmur2_random"}
    )
    for i in range(keys):
        producer.produce(c_topic, key=f"key-{i}", value=f"{c_topic}-{i}")
    assert producer.flush(15) == 0
    js = {m.key: m.partition for m in confluent_read(shared_broker, js_topic, 6, keys)}
    java = {m.key: m.partition for m in confluent_read(shared_broker, c_topic, 6, keys)}
    assert len(js) == keys
    assert js == java
    assert len(set(js.values())) == 6


def test_kafkajs_idempotent_producer(shared_broker: BrokerProcess) -> None:
    """Two idempotent KafkaJS producers (one request in flight): every message once, each
    stored batch carrying its producer's id, epoch 0 and a sequence that continues the last."""
    topic = new_topic(shared_broker, 3)
    for run in ("first", "second"):
        out = kafkajs(
            shared_broker,
            "produce",
            "--topic",
            topic,
            "--n",
            "500",
            "--batch",
            "50",
            "--idempotent",
            "--prefix",
            run,
        )
        assert out["idempotent"] is True
    msgs = confluent_read(shared_broker, topic, 3, 1000)
    assert values(msgs) == sorted(f"{run}-{i}" for run in ("first", "second") for i in range(500))
    assert_dense(msgs)
    ids_by_run: dict[str, set[int]] = defaultdict(set)
    for partition in range(3):
        next_sequence: dict[int, int] = {}
        for header, records in stored_batches(shared_broker.port, topic, partition):
            assert header.producer_id >= 0 and header.producer_epoch == 0
            assert header.base_sequence == next_sequence.get(header.producer_id, 0)
            next_sequence[header.producer_id] = header.base_sequence + header.records_count
            runs = {str(_text(r.value)).split("-")[0] for r in records}
            assert len(runs) == 1
            ids_by_run[runs.pop()].add(header.producer_id)
    assert all(len(ids) == 1 for ids in ids_by_run.values())
    assert ids_by_run["first"] != ids_by_run["second"]


def test_kafkajs_transactions_read_committed(shared_broker: BrokerProcess) -> None:
    """KafkaJS transactions (one committed, one aborted, one committed, the aborted one in
    gzip): KafkaJS's consumer (read_committed by default) gets exactly the committed
    messages, confluent-kafka with read_uncommitted gets all of them."""
    topic = new_topic(shared_broker, 2)
    txn = f"txn-{topic}"
    runs = {"one": "", "aborted": "--abort", "two": ""}
    for run, abort in runs.items():
        args = ["--transactional-id", txn, "--prefix", run, "--batch", "20"]
        args += [abort, "--codec", "gzip"] if abort else []
        out = kafkajs(shared_broker, "produce", "--topic", topic, "--n", "60", *args)
        assert out["transaction"] == ("aborted" if abort else "committed")
    committed = sorted(f"{run}-{i}" for run in ("one", "two") for i in range(60))
    msgs, _ = kafkajs_consume(shared_broker, topic, f"g-{topic}", 120, "--from-beginning")
    assert values(msgs) == committed
    everything = confluent_read(shared_broker, topic, 2, 180, isolation="read_uncommitted")
    assert values(everything) == sorted(committed + [f"aborted-{i}" for i in range(60)])


# -- KafkaJS consumer groups ------------------------------------------------------------------


def wait_for_members(broker: BrokerProcess, group: str, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        [described] = kafkajs(broker, "admin", "describe-group", "--group", group)["groups"]
        if described["state"] == "Stable" and len(described["members"]) == count:
            return
        assert time.monotonic() < deadline, f"group {group} never had {count} members: {described}"
        time.sleep(0.1)


def test_kafkajs_group_members_split_partitions(
    shared_broker: BrokerProcess, tmp_path: Path
) -> None:
    """Three KafkaJS processes join one group one after the other (each join rebalances it)
    over a 6-partition topic: the final assignments are disjoint and cover every partition,
    each member reads only its own partitions, and together they read every message once."""
    topic, group, n = new_topic(shared_broker, 6), f"g-{uuid.uuid4().hex[:8]}", 600
    kafkajs(shared_broker, "produce", "--topic", topic, "--n", str(n), "--keys", "60")
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    args = ("consume", "--topic", topic, "--group", group, "--from-beginning")
    members: list[Running] = []
    try:
        for count in (1, 2, 3):
            members.append(
                Running(shared_broker, *args, "--members", "3", "--barrier", str(barrier))
            )
            if count < 3:  # with three, members finish, commit and leave: their summaries tell
                wait_for_members(shared_broker, group, count)
        summaries = [m.result() for m in members]
    finally:
        for m in members:
            m.kill()

    assert summaries[0]["assignments"][0] == list(range(6))  # alone at first
    assert len(summaries[0]["assignments"]) >= 3 and len(summaries[1]["assignments"]) >= 2
    final = [set(s["assignments"][-1]) for s in summaries]
    assert all(final)
    assert sum(len(a) for a in final) == 6 and set().union(*final) == set(range(6))
    assert len({s["memberId"] for s in summaries}) == 3
    everything: list[Msg] = []
    for s, owned in zip(summaries, final, strict=True):
        msgs = consumed(s)
        assert {m.partition for m in msgs} <= owned
        everything += msgs
    assert values(everything) == sorted(f"{topic}-{i}" for i in range(n))
    assert_dense(everything)
    counts = Counter(m.partition for m in everything)
    assert high_watermarks(shared_broker, topic) == counts
    assert group_offsets(shared_broker, topic, group) == counts
    [described] = kafkajs(shared_broker, "admin", "describe-group", "--group", group)["groups"]
    assert (described["state"], described["members"]) == ("Empty", [])


def produce_run(broker: BrokerProcess, topic: str, run: str, n: int) -> list[str]:
    kafkajs(broker, "produce", "--topic", topic, "--n", str(n), "--prefix", run, "--batch", "20")
    return sorted(f"{run}-{i}" for i in range(n))


def test_kafkajs_group_resumes_from_its_commits(shared_broker: BrokerProcess) -> None:
    """A second run of the same KafkaJS group gets exactly what was produced after the first
    run's commit: nothing lost, nothing delivered again (--from-beginning, asked both times,
    only applies to partitions without a commit)."""
    topic, group = new_topic(shared_broker, 3), f"g-{uuid.uuid4().hex[:8]}"
    first = produce_run(shared_broker, topic, "first", 90)
    msgs, _ = kafkajs_consume(shared_broker, topic, group, 90, "--from-beginning")
    assert values(msgs) == first
    assert group_offsets(shared_broker, topic, group) == high_watermarks(shared_broker, topic)

    second = produce_run(shared_broker, topic, "second", 60)
    msgs, _ = kafkajs_consume(shared_broker, topic, group, 60, "--from-beginning")
    assert values(msgs) == second
    assert group_offsets(shared_broker, topic, group) == high_watermarks(shared_broker, topic)


def confluent_group_consume(broker: BrokerProcess, topic: str, group: str, n: int) -> list[Msg]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "fetch.wait.max.ms": 100,
        }
    )
    got: list[Msg] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(got) < n:
            assert time.monotonic() < deadline, f"confluent-kafka got {len(got)} of {n}"
            for m in consumer.consume(n - len(got), 0.3):
                assert m.error() is None, m.error()
                got.append(msg_of(m))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


def test_kafkajs_and_confluent_share_group_offsets(shared_broker: BrokerProcess) -> None:
    """KafkaJS commits, confluent-kafka resumes the group from there and commits, KafkaJS
    resumes from confluent-kafka's commit."""
    topic, group = new_topic(shared_broker, 3), f"g-{uuid.uuid4().hex[:8]}"
    first = produce_run(shared_broker, topic, "first", 45)
    msgs, _ = kafkajs_consume(shared_broker, topic, group, 45, "--from-beginning")
    assert values(msgs) == first

    second = produce_run(shared_broker, topic, "second", 30)
    assert values(confluent_group_consume(shared_broker, topic, group, 30)) == second
    assert group_offsets(shared_broker, topic, group) == high_watermarks(shared_broker, topic)

    third = produce_run(shared_broker, topic, "third", 30)
    msgs, _ = kafkajs_consume(shared_broker, topic, group, 30, "--from-beginning")
    assert values(msgs) == third
    assert group_offsets(shared_broker, topic, group) == high_watermarks(shared_broker, topic)


# -- KafkaJS reading another client's data ----------------------------------------------------


def confluent_messages(
    topic: str,
) -> Iterator[tuple[int, str | None, str | None, list[tuple[str, str | bytes | None]], int]]:
    """(partition, key, value, headers, timestamp) with the edge cases a reader must keep."""
    base = recent_timestamp_ms()
    yield 0, None, "no key", [], base
    yield 0, "tombstone", None, [], base + 1
    yield 0, "empty", "", [("empty", ""), ("null", None)], base + 2
    yield 1, "unicode ключ", "värde ✓ 🚀", [("h", "ü"), ("h", "second")], base + 3
    for i in range(200):
        yield i % 2, f"key-{i % 7}", f"{topic}-{i}", [("seq", str(i))], base + 10 + i


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_kafkajs_reads_confluent_produced(shared_broker: BrokerProcess, codec: str) -> None:
    """What confluent-kafka produced (null key, null value, empty value and header, null
    header, a repeated header name, non-ASCII text, explicit timestamps) reaches KafkaJS
    unchanged, at the offsets it was written to."""
    topic = new_topic(shared_broker, 2)
    producer = Producer(
        {"bootstrap.servers": shared_broker.bootstrap, "compression.type": codec, "linger.ms": 5}
    )
    expected: list[Msg] = []
    next_offset = [0, 0]
    for partition, key, value, headers, timestamp in confluent_messages(topic):
        producer.produce(
            topic, key=key, value=value, partition=partition, headers=headers, timestamp=timestamp
        )
        expected.append(
            Msg(partition, next_offset[partition], key, value, _headers(headers), timestamp)
        )
        next_offset[partition] += 1
        if partition == 1 and key == "unicode ключ":
            assert producer.flush(10) == 0  # its own batch: the edge cases are not all one batch
    assert producer.flush(15) == 0
    msgs, _ = kafkajs_consume(shared_broker, topic, f"g-{topic}", len(expected), "--from-beginning")
    assert msgs == sorted(expected)


# -- through broker restarts ------------------------------------------------------------------


def test_kafkajs_through_broker_restarts(broker: BrokerProcess) -> None:
    """An idempotent KafkaJS producer keeps sending while the broker restarts (SIGTERM): its
    retries store nothing twice and lose nothing. A group's commits made before a SIGKILL
    hold after it: the next run gets exactly the rest."""
    topic, group, n = new_topic(broker, 3), f"g-{uuid.uuid4().hex[:8]}", 1500
    args = ("produce", "--topic", topic, "--n", str(n), "--batch", "10", "--interval-ms", "20")
    producer = Running(broker, *args, "--idempotent")
    try:
        watcher = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
        try:
            deadline = time.monotonic() + 20
            while watcher.get_watermark_offsets(TopicPartition(topic, 0), 5)[1] < 50:
                assert time.monotonic() < deadline, "the KafkaJS producer sent nothing"
                time.sleep(0.05)
        finally:
            watcher.close()
        assert producer.proc.poll() is None, "the producer finished before the restart"
        broker.restart()
        assert producer.result(timeout=60)["sent"] == n
    finally:
        producer.kill()
    msgs = confluent_read(broker, topic, 3, n)
    assert values(msgs) == sorted(f"{topic}-{i}" for i in range(n))
    assert_dense(msgs)

    first, _ = kafkajs_consume(broker, topic, group, 700, "--from-beginning")
    broker.kill()
    broker.start()
    # The first run may not have reached every partition: those start from the beginning.
    rest, _ = kafkajs_consume(broker, topic, group, n - 700, "--from-beginning")
    assert sorted(values(first) + values(rest)) == values(msgs)
    assert group_offsets(broker, topic, group) == high_watermarks(broker, topic)
