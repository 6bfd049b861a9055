"""``spark.read.format("tiered-mq")`` on local[2] against a bucket layout on file:// and on a
real S3 server (SeaweedFS), written the way the broker's uploader writes it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401 - the fixture
from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tests.unit.spark.spark_support import CountingProxy, spark_session
from tiered_mq.cold.object_store import SyncObjectStore, open_sync_store

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

T0 = 1_700_000_000_000
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
Expected = list[tuple[Any, ...]]


def rows_for(base: int, n: int, partition: int) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for i in range(n):
        o = base + i
        key = None if o % 7 == 0 else b"key-%d" % o
        value = None if o % 11 == 0 else b"value-%d-%d" % (partition, o) * (1 + o % 3)
        headers = [("h", b"x%d" % o), ("n", None)] if o % 5 == 0 else []
        out.append((key, value, headers, T0 + o * 10))
    return out


def build(store: SyncObjectStore, prefix: str, segments: int = 2, batches: int = 4) -> Expected:
    """One partition per codec (partition = codec id), ``segments`` x ``batches`` x 25 records;
    partition 0's last batch uses LogAppendTime."""
    write_topic_manifest(store, prefix, "orders", len(CODECS))
    expected: Expected = []
    for codec in CODECS:
        w = PartitionWriter(store, prefix, "orders", codec, index_interval=512)
        for _ in range(segments):
            for b in range(batches):
                base = w.next_offset
                rows = rows_for(base, 25, codec)
                append_time = codec == 0 and b == batches - 1
                w.append(rows, compression=codec, log_append_time=append_time, append_time=T0)
                for i, (k, v, h, ts) in enumerate(rows):
                    stamp = T0 if append_time else ts
                    expected.append((k, v, "orders", codec, base + i, stamp * 1000,
                                     int(append_time), h or None))  # fmt: skip
            w.roll()
    return sorted(expected, key=lambda r: (r[3], r[4]))


def collect(df: Any) -> Expected:
    rows = df.selectExpr(
        "key", "value", "topic", "partition", "offset", "unix_micros(timestamp) AS ts",
        "timestampType", "headers",
    ).collect()  # fmt: skip
    out = []
    for r in rows:
        headers = None
        if r.headers is not None:
            headers = [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers]
        out.append(
            (
                None if r.key is None else bytes(r.key),
                None if r.value is None else bytes(r.value),
                r.topic,
                r.partition,
                r.offset,
                r.ts,
                r.timestampType,
                headers,
            )
        )
    return sorted(out, key=lambda r: (r[3], r[4]))


@pytest.fixture(scope="module")
def spark() -> Any:
    return spark_session()


def test_file_bucket_every_codec_exact_rows(spark: Any, tmp_path: Path) -> None:
    expected = build(open_sync_store(f"file://{tmp_path}"), "pre")
    reader = (
        spark.read.format("tiered-mq")
        .option("path", f"file://{tmp_path}?prefix=pre")
        .option("topic", "orders")
    )
    # Spark's Kafka source: no headers column unless includeHeaders=true
    assert [f.name for f in reader.load().schema.fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType",
    ]  # fmt: skip
    df = reader.option("includeHeaders", "true").load()
    assert [f.name for f in df.schema.fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
    ]  # fmt: skip
    assert df.rdd.getNumPartitions() == 2 * len(CODECS)  # one split per segment
    assert collect(df) == expected


@pytest.fixture(scope="module")
def s3_bucket(seaweedfs: SeaweedFS) -> Iterator[dict[str, Any]]:  # noqa: F811
    bucket = seaweedfs.new_bucket()
    store = open_sync_store(f"s3://{bucket}", **seaweedfs.store_options())
    expected = build(store, "tiered", segments=3)
    proxy = CountingProxy(seaweedfs.endpoint_url)
    try:
        yield {"bucket": bucket, "store": store, "expected": expected, "proxy": proxy}
    finally:
        proxy.close()


def s3_reader(spark: Any, info: dict[str, Any]) -> Any:
    from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY

    return (
        spark.read.format("tiered-mq")
        .option("path", f"s3://{info['bucket']}/tiered")
        .option("s3.endpoint", info["proxy"].endpoint_url)
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
        .option("topic", "orders")
        .option("includeHeaders", "true")
    )


def test_s3_bucket_rows_and_fewer_gets_with_bounds(spark: Any, s3_bucket: dict[str, Any]) -> None:
    proxy: CountingProxy = s3_bucket["proxy"]
    expected: Expected = s3_bucket["expected"]
    proxy.reset()
    assert collect(s3_reader(spark, s3_bucket).load()) == expected
    full = proxy.log_gets()
    assert full == 3 * len(CODECS)

    # startingOffsets / endingOffsets: segments outside are never fetched.
    proxy.reset()
    bounded = (
        s3_reader(spark, s3_bucket)
        .option("startingOffsets", '{"orders": {"0": 150, "1": 30, "2": -2, "3": -2, "4": -2}}')
        .option("endingOffsets", '{"orders": {"0": 210, "1": 60, "2": 0, "3": 0, "4": 0}}')
        .load()
    )
    assert collect(bounded) == [
        r for r in expected if (r[3] == 0 and 150 <= r[4] < 210) or (r[3] == 1 and 30 <= r[4] < 60)
    ]
    assert proxy.log_gets() == 3  # p0: segments 1 and 2, p1: segment 0

    # Filters on partition and offset are pushed down: one segment of one partition.
    proxy.reset()
    df = s3_reader(spark, s3_bucket).load().where("partition = 2 AND offset >= 230")
    assert collect(df) == [r for r in expected if r[3] == 2 and r[4] >= 230]
    assert proxy.log_gets() == 1

    # startingTimestamp: segments whose max timestamp is below it are skipped.
    proxy.reset()
    start_ts = T0 + 205 * 10 + 5
    df = s3_reader(spark, s3_bucket).option("startingTimestamp", str(start_ts)).load()
    assert collect(df) == [r for r in expected if r[4] * 10 + T0 > start_ts]
    assert proxy.log_gets() == len(CODECS)
    assert full > 3


def test_corrupt_object_fails_the_job_naming_it(
    spark: Any,
    seaweedfs: SeaweedFS,  # noqa: F811
    tmp_path: Path,
) -> None:
    from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY

    bucket = seaweedfs.new_bucket()
    store = open_sync_store(f"s3://{bucket}", **seaweedfs.store_options())
    build(store, "", segments=1, batches=2)
    log_key = next(i.key for i in store.list("topics/orders/3/") if i.key.endswith(".log"))
    data = bytearray(store.get(log_key)[0])
    data[200] ^= 0x01
    store.put(log_key, bytes(data))
    df = (
        spark.read.format("tiered-mq")
        .option("path", f"s3://{bucket}")
        .option("s3.endpoint", seaweedfs.endpoint_url)
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
        .option("topic", "orders")
        .load()
    )
    with pytest.raises(Exception) as info:
        df.count()
    assert f"s3://{bucket}/{log_key}" in str(info.value)


def test_aborted_transaction_is_absent(spark: Any, tmp_path: Path) -> None:
    store = open_sync_store(f"file://{tmp_path}")
    w = PartitionWriter(store, "", "payments", 0)
    txn = {"producer_id": 42, "producer_epoch": 0, "is_transactional": True}
    w.append([(b"k", b"before", (), T0)] * 5)
    first, _ = w.append([(b"k", b"aborted", (), T0)] * 5, **txn)
    w.roll()
    w.append([(b"k", b"aborted", (), T0)] * 5, **txn)
    w.append([(b"k", b"between", (), T0)] * 5)
    w.control(42, commit=False, timestamp=T0, first_offset=first)
    w.append([(b"k", b"committed", (), T0)] * 5, **txn)
    w.control(42, commit=True, timestamp=T0, first_offset=first)
    w.roll()
    reader = spark.read.format("tiered-mq").option("path", f"file://{tmp_path}")
    df = reader.option("topic", "payments").load()
    values = sorted(bytes(r.value) for r in df.select("value").collect())
    assert values == sorted([b"before"] * 5 + [b"between"] * 5 + [b"committed"] * 5)
    dirty = reader.option("topic", "payments").option("isolation.level", "read_uncommitted")
    assert dirty.load().where("value = 'aborted'").count() == 10


def test_plain_registration_without_pushdown(spark: Any, tmp_path: Path) -> None:
    from tiered_mq.spark.datasource import TieredMQDataSource

    expected = build(open_sync_store(f"file://{tmp_path}"), "", segments=1, batches=1)
    spark.dataSource.register(TieredMQDataSource)
    try:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
        df = (
            spark.read.format("tiered-mq")
            .option("path", f"file://{tmp_path}")
            .option("topic", "orders")
            .option("endingOffsets", "latest")
            .load()
        )
        assert df.where("offset < 3").count() == 3 * len(CODECS)
        assert df.count() == len(expected)
        nothing = (
            spark.read.format("tiered-mq")
            .option("path", f"file://{tmp_path}")
            .option("topic", "orders")
            .option("startingTimestamp", str(T0 + 10**6))  # after every record
            .option("startingOffsetsByTimestampStrategy", "latest")
            .load()
        )
        assert nothing.count() == 0  # no split at all
    finally:
        with contextlib.suppress(Exception):
            import tiered_mq.spark

            tiered_mq.spark.register(spark)


def test_bad_options_fail_at_load_naming_the_option(spark: Any, tmp_path: Path) -> None:
    build(open_sync_store(f"file://{tmp_path}"), "", segments=1, batches=1)

    def reader() -> Any:  # DataFrameReader.option() changes the reader in place
        return spark.read.format("tiered-mq").option("path", f"file://{tmp_path}")

    with pytest.raises(Exception, match=r"(?i)unknown option\(s\) 'startingOffset'"):
        reader().option("topic", "orders").option("startingOffset", '{"orders": {"0": 5}}').load()
    with pytest.raises(
        Exception, match=r"you must specify all TopicPartitions.*not read: \{orders-9\}"
    ):
        reader().option("topic", "orders").option("startingOffsets", '{"orders": {"9": 5}}').load(
        ).count()  # fmt: skip
    ok = reader().option("topic", "orders").option("failOnDataLoss", "false").load()
    assert ok.count() == 25 * len(CODECS)


def test_offset_filter_with_a_starting_timestamp(spark: Any, tmp_path: Path) -> None:
    """``where("offset >= 15")`` returns the rows of the unfiltered read at 15 and above: the
    first record at startingTimestamp (offset 10, clocks disagree) does not move to 20."""
    from tests.unit.spark.test_pushed_filters import T0 as TS
    from tests.unit.spark.test_pushed_filters import out_of_order

    out_of_order(tmp_path)
    df = (
        spark.read.format("tiered-mq")
        .option("path", f"file://{tmp_path}")
        .option("topic", "t")
        .option("startingTimestamp", str(TS + 50))
        .load()
    )
    assert sorted(r.offset for r in df.collect()) == list(range(10, 30))
    assert sorted(r.offset for r in df.where("offset >= 15").collect()) == list(range(15, 30))
