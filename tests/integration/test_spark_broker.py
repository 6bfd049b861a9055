"""Spark reads the segments the REAL broker uploaded (``tiered-mq dev`` tiering to SeaweedFS)
and returns exactly what a Kafka consumer reads through the broker, for every codec; aborted
transactions are absent from both."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.conftest import BrokerFactory
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import PREFIX, TieredBroker, wait_until
from tests.unit.spark.spark_support import spark_session
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import parse_partition_manifest
from tiered_mq.cold.object_store import open_sync_store
from tiered_mq.errors import ObjectNotFoundError

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
COUNT = 1500  # ~250 KB per topic: several 64 KiB segments each
T0 = (int(time.time()) - 3600) * 1000


def _noise(i: int, blocks: int) -> bytes:
    return b"".join(hashlib.sha256(b"%d-%d" % (i, j)).digest() for j in range(blocks))


def record(i: int) -> dict[str, Any]:
    return {
        "key": None if i % 13 == 0 else b"key-%d" % i,
        # incompressible, so that every codec's topic fills several 64 KiB segments
        "value": None if i % 17 == 0 else b"value-%d|" % i + _noise(i, 3 + i % 10),
        "headers": [("i", b"%d" % i), ("empty", None)] if i % 4 == 0 else None,
        "timestamp": T0 + i * 10,
    }


@pytest.fixture(scope="module")
def tiered(
    tmp_path_factory: pytest.TempPathFactory,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> Iterator[TieredBroker]:
    with TieredBroker(tmp_path_factory.mktemp("spark"), seaweedfs) as broker:
        for codec in CODECS:
            broker.create_topic(f"spark-{codec}")
            producer = Producer(
                {
                    "bootstrap.servers": broker.bootstrap,
                    "compression.type": codec,
                    "linger.ms": 5,
                    "batch.size": 8192,
                }
            )
            for i in range(COUNT):
                producer.produce(f"spark-{codec}", partition=0, **record(i))
                if i % 500 == 0:
                    producer.poll(0)
            assert producer.flush(30) == 0
        for codec in CODECS:
            wait_until(
                lambda c=codec: len(broker.remote_segments(f"spark-{c}")) >= 2,  # type: ignore[misc]
                timeout=60,
                what=f"spark-{codec} segments in the bucket",
            )
        yield broker


def uploaded_end(broker: TieredBroker, topic: str) -> int:
    manifest = broker.manifest(topic)
    assert manifest is not None
    return manifest.next_offset()


def consume(broker: TieredBroker, ends: dict[str, int], committed: bool = True) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"verify-{time.time()}",
            "enable.auto.commit": "false",
            "isolation.level": "read_committed" if committed else "read_uncommitted",
        }
    )
    consumer.assign([TopicPartition(t, 0, 0) for t in ends])
    rows: list[Any] = []
    done: set[str] = {t for t, end in ends.items() if end == 0}
    deadline = time.monotonic() + 60
    try:
        while len(done) < len(ends) and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if msg.offset() >= ends[msg.topic()]:
                done.add(msg.topic())
                continue
            ts_type, ts = msg.timestamp()
            headers = msg.headers()
            rows.append(
                (
                    msg.topic(),
                    msg.offset(),
                    msg.key(),
                    msg.value(),
                    ts * 1000,
                    ts_type - 1,
                    None if not headers else [tuple(h) for h in headers],
                )
            )
            if msg.offset() == ends[msg.topic()] - 1:
                done.add(msg.topic())
    finally:
        consumer.close()
    return sorted(rows, key=lambda r: (r[0], r[1]))


def spark_rows(broker: TieredBroker, options: dict[str, str]) -> list[Any]:
    spark = spark_session()
    reader = (
        spark.read.format("tiered-mq")
        .option("path", f"s3://{broker.bucket}/{PREFIX}")
        .option("s3.endpoint", broker.seaweedfs.endpoint_url)
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
        .option("includeHeaders", "true")
    )
    for k, v in options.items():
        reader = reader.option(k, v)
    out = []
    cols = ["topic", "offset", "key", "value", "unix_micros(timestamp) AS ts", "timestampType",
            "headers"]  # fmt: skip
    for r in reader.load().selectExpr(*cols).collect():
        headers = None
        if r.headers is not None:
            headers = [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers]
        out.append(
            (
                r.topic,
                r.offset,
                None if r.key is None else bytes(r.key),
                None if r.value is None else bytes(r.value),
                r.ts,
                r.timestampType,
                headers,
            )
        )
    return sorted(out, key=lambda r: (r[0], r[1]))


def test_spark_matches_the_consumer_for_every_codec(tiered: TieredBroker) -> None:
    ends = {f"spark-{c}": uploaded_end(tiered, f"spark-{c}") for c in CODECS}
    assert all(end > 0 for end in ends.values())
    expected = consume(tiered, ends)
    assert len(expected) == sum(ends.values())
    got = spark_rows(
        tiered,
        {
            "topicPattern": f"spark-({'|'.join(CODECS)})",
            "endingOffsets": json.dumps({t: {"0": e} for t, e in ends.items()}),
        },
    )
    assert got == expected
    # and both are what was produced
    first = [r for r in got if r[0] == "spark-zstd"][:50]
    assert [(r[2], r[3], r[4] // 1000) for r in first] == [
        (record(i)["key"], record(i)["value"], record(i)["timestamp"]) for i in range(50)
    ]


def test_aborted_transaction_absent_as_for_a_read_committed_consumer(
    tiered: TieredBroker,
) -> None:
    topic = "spark-txn"
    tiered.create_topic(topic)
    producer = Producer(
        {"bootstrap.servers": tiered.bootstrap, "transactional.id": "spark-test", "linger.ms": 5}
    )
    producer.init_transactions(15)
    for round_ in range(6):
        producer.begin_transaction()
        for i in range(120):
            value = b"round-%d-%d|" % (round_, i) + b"x" * 200
            producer.produce(topic, partition=0, value=value, timestamp=T0 + i)
        if round_ % 2:
            assert producer.flush(15) == 0  # else librdkafka purges them unsent on abort
            producer.abort_transaction(15)
        else:
            producer.commit_transaction(15)
    # batches below the 64 KiB segment.bytes (a batch above it is refused)
    plain = Producer({"bootstrap.servers": tiered.bootstrap, "linger.ms": 5, "batch.size": 16384})
    for i in range(400):  # roll past the last marker so it is uploaded too
        plain.produce(topic, partition=0, value=b"after-%d|" % i + b"y" * 200)
    assert plain.flush(30) == 0
    wait_until(
        lambda: uploaded_end(tiered, topic) >= 6 * 121 if tiered.manifest(topic) else False,
        timeout=60,
        what="the transactions to reach the bucket",
    )
    end = uploaded_end(tiered, topic)
    expected = consume(tiered, {topic: end})
    got = spark_rows(tiered, {"topic": topic, "endingOffsets": json.dumps({topic: {"0": end}})})
    assert got == expected
    values = [r[3] for r in got]
    assert not [v for v in values if v.startswith((b"round-1-", b"round-3-", b"round-5-"))]
    assert len([v for v in values if v.startswith(b"round-")]) == 3 * 120


def test_dev_broker_file_bucket(tmp_path: Path, broker_factory: BrokerFactory) -> None:
    """`tiered-mq dev` tiers to file://<data-dir>/cold by default; Spark reads that path."""
    from confluent_kafka.admin import AdminClient, NewTopic

    configs = ["segment.bytes=65536", "remote.log.manager.task.interval.ms=200"]
    broker = broker_factory(extra_args=[a for c in configs for a in ("--config", c)])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic("local-orders", 2, 1, config={"remote.storage.enable": "true"})
    admin.create_topics([topic])["local-orders"].result(30)
    # Small batches: a batch is appended whole, so one big batch per partition would never
    # roll a 64 KiB segment and nothing would be uploaded.
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "compression.type": "zstd", "batch.size": 16384}
    )
    for i in range(2 * COUNT):
        producer.produce("local-orders", partition=i % 2, **record(i))
    assert producer.flush(30) == 0
    store = open_sync_store(f"file://{broker.data_dir / 'cold'}")

    def ends() -> dict[int, int]:
        out = {}
        for p in (0, 1):
            try:
                data, _ = store.get(layout.manifest_key("", "local-orders", p))
            except ObjectNotFoundError:
                return {}
            out[p] = parse_partition_manifest(data).next_offset()
        return out if all(out.values()) else {}

    end = wait_until(ends, timeout=60, what="uploads to the file:// bucket")
    spark = spark_session()
    df = (
        spark.read.format("tiered-mq")
        .option("path", f"file://{broker.data_dir / 'cold'}")
        .option("topic", "local-orders")
        .option("endingOffsets", json.dumps({"local-orders": {str(p): e for p, e in end.items()}}))
        .load()
    )
    got = sorted(
        (r.partition, r.offset, r.value)
        for r in df.select("partition", "offset", "value").collect()
    )
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "v", "enable.auto.commit": "false"}
    )
    consumer.assign([TopicPartition("local-orders", p, 0) for p in end])
    want: list[Any] = []
    deadline = time.monotonic() + 60
    while len(want) < sum(end.values()) and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error() and msg.offset() < end[msg.partition()]:
            want.append((msg.partition(), msg.offset(), msg.value()))
    consumer.close()
    assert got == sorted(want)
    assert len(got) == sum(end.values())


def _produce_transaction(broker: TieredBroker, topic: str, tag: str, commit: bool) -> None:
    """One transaction of 900 records of ~210 bytes (about three 64 KiB segments)."""
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": f"spark-{tag}",
            "linger.ms": 5,
            "batch.size": 16384,
        }
    )
    producer.init_transactions(15)
    producer.begin_transaction()
    for i in range(900):
        producer.produce(topic, partition=0, value=b"%s-%d|" % (tag.encode(), i) + b"t" * 200)
    assert producer.flush(15) == 0
    if commit:
        producer.commit_transaction(15)
    else:
        producer.abort_transaction(15)


def _produce_plain(broker: TieredBroker, topic: str, tag: str, count: int) -> None:
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "batch.size": 16384}
    )
    for i in range(count):
        producer.produce(topic, partition=0, value=b"%s-%d|" % (tag.encode(), i) + b"p" * 200)
    assert producer.flush(15) == 0


def _uploaded_to_active(broker: TieredBroker, topic: str) -> tuple[int, int]:
    """Waits until every rolled segment is in the bucket; returns (uploaded end, log end).

    The uploader stops below the last stable offset, so this also waits for the transaction's
    marker, which the coordinator writes after EndTxn answers."""

    def done() -> int:
        active = int(broker.local_segments(topic)[-1].stem)
        end = uploaded_end(broker, topic) if broker.manifest(topic) else 0
        return end if end == active else 0

    end = wait_until(done, timeout=60, what="the rolled segments in the bucket")
    return end, broker.list_offset(topic, -1)[1]  # the log end offset


def _tags(rows: list[Any]) -> dict[bytes, int]:
    counts: dict[bytes, int] = {}
    for row in rows:
        tag = row[3].split(b"-", 1)[0]
        counts[tag] = counts.get(tag, 0) + 1
    return counts


def test_undecided_transaction_stops_read_committed_until_its_marker_is_uploaded(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    """A transaction's data segments reach the bucket while its COMMIT or ABORT marker is still
    in the broker's active segment: the bucket does not say how it ended, so read_committed
    stops at its first offset (the bucket's last stable offset, as a Kafka consumer stops at
    the LSO). Once the marker is uploaded, the committed transaction is returned and the
    aborted one never is."""
    topic = "spark-undecided"
    with TieredBroker(tmp_path, seaweedfs) as broker:
        broker.create_topic(topic)
        _produce_plain(broker, topic, "before", 100)
        _produce_transaction(broker, topic, "committed", commit=True)
        end, log_end = _uploaded_to_active(broker, topic)
        assert 100 < end < log_end  # some of it uploaded; its marker (log_end - 1) is not
        # the driver finds the open transaction in the producer snapshot of the last segment
        assert broker.remote_segments(topic)[-1].key(layout.SNAPSHOT) is not None
        assert _tags(spark_rows(broker, {"topic": topic})) == {b"before": 100}
        dirty = spark_rows(broker, {"topic": topic, "isolation.level": "read_uncommitted"})
        assert len(dirty) == end  # read_uncommitted returns everything uploaded, as before

        _produce_transaction(broker, topic, "aborted", commit=False)
        end, log_end = _uploaded_to_active(broker, topic)
        assert 100 + 900 + 1 < end < log_end  # the COMMIT is uploaded, the ABORT is not
        assert _tags(spark_rows(broker, {"topic": topic})) == {b"before": 100, b"committed": 900}
        dirty = spark_rows(broker, {"topic": topic, "isolation.level": "read_uncommitted"})
        assert _tags(dirty)[b"aborted"] > 0  # aborted records uploaded, returned only here

        _produce_plain(broker, topic, "after", 400)  # rolls the ABORT marker out, uploaded
        wait_until(
            lambda: uploaded_end(broker, topic) > log_end,
            timeout=60,
            what="the ABORT marker and later records in the bucket",
        )
        end = uploaded_end(broker, topic)  # more may follow meanwhile: both read up to end
        got = spark_rows(broker, {"topic": topic, "endingOffsets": json.dumps({topic: {"0": end}})})
        assert got == consume(broker, {topic: end})
        tags = _tags(got)
        assert tags.pop(b"after") > 0 and tags == {b"before": 100, b"committed": 900}
