"""``spark.read.format("tiered-mq")`` where Spark's own Kafka source (spark-sql-kafka-0-10)
fails a batch read: Spark in local mode over a real S3 server (SeaweedFS).

Spark's rules, from its KafkaSourceProvider / KafkaOffsetReaderAdmin / KafkaSourceRDD:
startingOffsets "latest" (or -1) and endingOffsets "earliest" (or -2) are refused in batch
queries; a start timestamp no record reaches fails unless startingOffsetsByTimestampStrategy is
"latest"; a timestamp resolves over the whole partition (Kafka's ListOffsets), and a start that
resolves past the end fails naming the topic and partition. Plus a bad topic pattern, and a
truncated ``.log`` object met by the read_committed look-ahead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tests.unit.spark.spark_support import spark_session
from tiered_mq.cold import layout
from tiered_mq.cold.object_store import SyncObjectStore, open_sync_store
from tiered_mq.record.batch import LOG_OVERHEAD

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

T0 = 1_700_000_000_000
LATE = 5  # the record at this offset carries a late timestamp: T0 + 500


def by_partition(timestamp: int) -> str:
    return json.dumps({"t": {"0": timestamp}})


def stamp(offset: int) -> int:
    """Timestamps T0 + 10 * offset, except offset LATE's (a producer clock ahead)."""
    return T0 + 500 if offset == LATE else T0 + offset * 10


@pytest.fixture(scope="module")
def spark() -> Any:
    return spark_session()


@pytest.fixture(scope="module")
def bucket(seaweedfs: SeaweedFS) -> Iterator[dict[str, Any]]:  # noqa: F811
    """Topic ``t``: one partition, offsets 0-59 in three segments of four 5-record batches."""
    name = seaweedfs.new_bucket()
    store = open_sync_store(f"s3://{name}", **seaweedfs.store_options())
    w = PartitionWriter(store, "", "t", 0, index_interval=100)
    for _ in range(3):
        for _ in range(4):
            base = w.next_offset
            w.append([(b"k", b"v%d" % (base + i), (), stamp(base + i)) for i in range(5)])
        w.roll()
    yield {"name": name, "store": store, "endpoint": seaweedfs.endpoint_url}


def reader(spark: Any, info: dict[str, Any], topic: str = "t") -> Any:
    r = (
        spark.read.format("tiered-mq")
        .option("path", f"s3://{info['name']}")
        .option("s3.endpoint", info["endpoint"])
        .option("s3.accessKey", ACCESS_KEY)
        .option("s3.secretKey", SECRET_KEY)
        .option("s3.region", "us-east-1")
        .option("s3.pathStyle", "true")
    )
    return r.option("topic", topic) if topic else r


def offsets(df: Any) -> list[int]:
    return sorted(r.offset for r in df.select("offset").collect())


@pytest.mark.parametrize(
    "end_option",
    [
        ("endingTimestamp", str(T0 + 400)),
        ("endingOffsetsByTimestamp", by_partition(T0 + 400)),
    ],
)
def test_end_timestamp_resolving_before_the_start_fails_naming_the_partition(
    spark: Any, bucket: dict[str, Any], end_option: tuple[str, str]
) -> None:
    """The first record at or after T0+400 is offset 5 (its late clock), found over the whole
    partition as Kafka's ListOffsets finds it: below startingOffsets 20, so Spark fails. (The
    old reader searched from offset 20 on and returned 20-39.)"""
    df = (
        reader(spark, bucket)
        .option("startingOffsets", '{"t": {"0": 20}}')
        .option(*end_option)
        .load()
    )
    with pytest.raises(Exception, match=(
        r"resolved start offset 20 is greater than the resolved end offset 5 for topic t "
        r"partition 0"
    )):  # fmt: skip
        df.count()
    # At or before the start: a read up to that record.
    ok = reader(spark, bucket).option("startingOffsets", '{"t": {"0": 3}}').option(*end_option)
    assert offsets(ok.load()) == [3, 4]
    same = reader(spark, bucket).option("startingOffsets", '{"t": {"0": 5}}').option(*end_option)
    assert offsets(same.load()) == []


def test_start_timestamp_resolving_past_the_end_fails(spark: Any, bucket: dict[str, Any]) -> None:
    # startingTimestamp T0+510 -> offset 51; endingTimestamp T0+100 -> offset 5 (the late one)
    df = (
        reader(spark, bucket)
        .option("startingTimestamp", str(T0 + 510))
        .option("endingTimestamp", str(T0 + 100))
        .load()
    )
    with pytest.raises(Exception, match="resolved start offset 51 is greater than the resolved "
                       "end offset 5 for topic t partition 0"):  # fmt: skip
        df.count()
    # startingTimestamp T0+300 -> offset 5 (the late one), past endingOffsets 4
    past = reader(spark, bucket).option("startingTimestamp", str(T0 + 300))
    with pytest.raises(Exception, match="resolved start offset 5 is greater than the resolved "
                       "end offset 4 for topic t partition 0"):  # fmt: skip
        past.option("endingOffsets", '{"t": {"0": 4}}').load().count()
    # T0+100 -> 5 and T0+510 -> 51: the rows between, as Kafka's offsetsForTimes places them
    both = (
        reader(spark, bucket)
        .option("startingTimestamp", str(T0 + 100))
        .option("endingTimestamp", str(T0 + 510))
        .load()
    )
    assert offsets(both) == list(range(5, 51))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("startingOffsets", "latest", "starting offset can't be latest for batch queries on Kafka"),
        ("startingOffsets", '{"t": {"0": -1}}',
         "startingOffsets for t-0 can't be latest for batch queries on Kafka"),
        ("endingOffsets", "earliest", "ending offset can't be earliest for batch queries on Kafka"),
        ("endingOffsets", '{"t": {"0": -2}}',
         "ending offset for t-0 can't be earliest for batch queries on Kafka"),
    ],
)  # fmt: skip
def test_latest_start_and_earliest_end_are_refused_at_load(
    spark: Any, bucket: dict[str, Any], option: str, value: str, message: str
) -> None:
    """Spark refuses these in batch queries (the old reader returned no rows)."""
    with pytest.raises(Exception, match=message):
        reader(spark, bucket).option(option, value).load()


def test_latest_start_is_ignored_under_a_start_timestamp(
    spark: Any, bucket: dict[str, Any]
) -> None:
    """As in Spark, a start timestamp takes precedence: startingOffsets is not looked at."""
    df = (
        reader(spark, bucket)
        .option("startingOffsets", "latest")
        .option("startingTimestamp", str(T0 + 550))
        .load()
    )
    assert offsets(df) == list(range(55, 60))


def test_start_timestamp_without_a_match(spark: Any, bucket: dict[str, Any]) -> None:
    """startingOffsetsByTimestampStrategy: "error" (the default) fails naming the partition and
    the timestamp; "latest" starts the partition at its latest offset."""
    after_all = str(T0 + 10_000)
    df = reader(spark, bucket).option("startingTimestamp", after_all).load()
    with pytest.raises(Exception, match=(
        f"No offset matched from request of topic-partition t-0 and timestamp {after_all}"
    )):  # fmt: skip
        df.count()
    by_json = reader(spark, bucket).option(
        "startingOffsetsByTimestamp", by_partition(int(after_all))
    )
    with pytest.raises(Exception, match="No offset matched from request of topic-partition t-0"):
        by_json.load().count()
    latest = (
        reader(spark, bucket)
        .option("startingTimestamp", after_all)
        .option("startingOffsetsByTimestampStrategy", "LATEST")
        .load()
    )
    assert latest.count() == 0
    with pytest.raises(Exception, match="startingOffsetsByTimestampStrategy 'sometimes'"):
        reader(spark, bucket).option("startingOffsetsByTimestampStrategy", "sometimes").load()


def test_start_timestamp_takes_precedence_over_its_json(spark: Any, bucket: dict[str, Any]) -> None:
    """Spark: startingTimestamp, then startingOffsetsByTimestamp, then startingOffsets."""
    df = (
        reader(spark, bucket)
        .option("startingOffsetsByTimestamp", by_partition(T0 + 100))
        .option("startingTimestamp", str(T0 + 550))
        .load()
    )
    assert offsets(df) == list(range(55, 60))


@pytest.mark.parametrize("option", ["subscribePattern", "topicPattern"])
def test_bad_topic_pattern_names_the_option(
    spark: Any, bucket: dict[str, Any], option: str
) -> None:
    with pytest.raises(Exception, match=(
        f"{option} 't\\(' is not a valid regular expression: .*Python's re module.*"
        "java.util.regex"
    )):  # fmt: skip
        reader(spark, bucket, topic="").option(option, "t(").load()
    assert offsets(reader(spark, bucket, topic="").option(option, "t|u").load()) == list(range(60))


def truncated_marker_segment(store: SyncObjectStore) -> str:
    """Topic ``tx``: segment 0 = 5 plain records, then 5 of a transaction of producer 42;
    segment 1 = 5 plain records, then the transaction's ABORT marker. No ``.txnindex`` (a bucket
    written without one): a read_committed split of segment 0 looks ahead into segment 1 for
    the marker. Segment 1's ``.log`` is then cut after its first batch (the object shorter
    than the manifest says). Returns its key."""
    w = PartitionWriter(store, "", "tx", 0)
    txn = {"producer_id": 42, "producer_epoch": 0, "is_transactional": True}
    w.append([(b"k", b"before", (), T0)] * 5)
    first, _ = w.append([(b"k", b"aborted", (), T0)] * 5, **txn)
    w.roll(with_txnindex=False)
    w.append([(b"k", b"between", (), T0)] * 5)
    w.control(42, commit=False, timestamp=T0, first_offset=first)
    segment = w.roll(with_txnindex=False)
    key = segment.key(layout.LOG)
    assert key is not None
    data, _ = store.get(key)
    cut = LOG_OVERHEAD + int.from_bytes(data[8:12], "big")  # the first batch: its batchLength
    assert cut < len(data)
    store.put(key, data[:cut])
    return key


def test_look_ahead_into_a_truncated_object_fails_naming_it(
    spark: Any, bucket: dict[str, Any]
) -> None:
    """The look-ahead's ranged read returns fewer bytes than the manifest's size: corruption,
    as for a split's own read. (The old reader walked the short bytes as a valid log, missed
    the ABORT marker and returned the aborted records.)"""
    key = truncated_marker_segment(bucket["store"])
    df = reader(spark, bucket, topic="tx").option("endingOffsets", '{"tx": {"0": 10}}').load()
    with pytest.raises(Exception, match=f"s3://{bucket['name']}/{key} at position \\d+: the "
                       "object ends early"):  # fmt: skip
        df.count()


def test_assign_reads_the_named_partitions(spark: Any, bucket: dict[str, Any]) -> None:
    """Spark's third way to name what to read: ``assign`` = {"topic": [partitions]}."""
    store = bucket["store"]
    write_topic_manifest(store, "", "m", 3)
    for p in range(3):
        w = PartitionWriter(store, "", "m", p)
        w.append([(b"k", b"v", (), T0 + i) for i in range(4)])
        w.roll()

    def assign(value: str) -> Any:
        return reader(spark, bucket, topic="").option("assign", value).load()

    rows = assign('{"m": [0, 2]}').select("partition", "offset").collect()
    assert sorted((r.partition, r.offset) for r in rows) == [
        (p, o) for p in (0, 2) for o in range(4)
    ]
    with pytest.raises(Exception, match=r"assign names partition\(s\) 5 of topic 'm'"):
        assign('{"m": [1, 5]}').count()
    with pytest.raises(Exception, match="No topicpartitions to assign as specified value for "
                       "option 'assign' is 'm'"):  # fmt: skip
        assign("m")
    with pytest.raises(Exception, match="give exactly one of"):
        reader(spark, bucket).option("assign", '{"m": [0]}').load()
    # offsets name exactly the assigned partitions, as in Spark
    with pytest.raises(Exception, match=r"Assigned: \{m-0\} \(missing: \{m-0\}; not read: "
                       r"\{m-1\}\)"):  # fmt: skip
        reader(spark, bucket, topic="").option("assign", '{"m": [0]}').option(
            "startingOffsets", '{"m": {"1": 2}}'
        ).load().count()


def test_offsets_json_must_name_every_partition(spark: Any, bucket: dict[str, Any]) -> None:
    """Spark's KafkaOffsetReaderAdmin: an offsets JSON (or a per-partition timestamp JSON) in
    effect names every partition read, else the batch fails: the old reader read the partitions
    left out from earliest (to latest), as if the JSON had named them -2 (-1)."""
    store = bucket["store"]
    write_topic_manifest(store, "", "two", 2)
    for p in range(2):
        w = PartitionWriter(store, "", "two", p)
        w.append([(b"k", b"v", (), T0 + i) for i in range(6)])
        w.roll()
    partial = [
        ("startingOffsets", '{"two": {"0": 2}}', r"missing: \{two-1\}"),
        ("endingOffsets", '{"two": {"1": 3}}', r"missing: \{two-0\}"),
        ("startingOffsetsByTimestamp", json.dumps({"two": {"0": T0 + 2}}), r"missing: \{two-1\}"),
        ("endingOffsetsByTimestamp", json.dumps({"two": {"1": T0 + 3}}), r"missing: \{two-0\}"),
    ]
    for option, value, missing in partial:
        df = reader(spark, bucket, topic="two").option(option, value).load()
        with pytest.raises(Exception, match=(
            f"If {option} contains specific offsets, you must specify all TopicPartitions"
            r".*Assigned: \{two-0, two-1\} \(" + missing
        )):  # fmt: skip
            df.count()
    # Every partition named (-2 earliest, -1 latest): read as given.
    df = (
        reader(spark, bucket, topic="two")
        .option("startingOffsets", '{"two": {"0": 2, "1": -2}}')
        .option("endingOffsets", '{"two": {"0": -1, "1": 3}}')
        .load()
    )
    rows = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert rows == [(0, o) for o in range(2, 6)] + [(1, o) for o in range(3)]
    # A JSON that a timestamp option overrides is not looked at, as in Spark.
    df = (
        reader(spark, bucket, topic="two")
        .option("startingOffsets", '{"two": {"0": 2}}')
        .option("startingTimestamp", str(T0 + 4))
        .load()
    )
    assert sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect()) == [
        (p, o) for p in range(2) for o in (4, 5)
    ]


def test_min_partitions_splits_the_read(spark: Any, bucket: dict[str, Any]) -> None:
    """Spark's minPartitions: at least about that many tasks, the same rows."""
    plain = reader(spark, bucket).load()
    assert plain.rdd.getNumPartitions() == 3  # one split per segment
    more = reader(spark, bucket).option("minPartitions", "7").load()
    assert more.rdd.getNumPartitions() >= 6
    assert offsets(more) == offsets(plain) == list(range(60))
    with pytest.raises(Exception, match="minPartitions must be positive"):
        reader(spark, bucket).option("minPartitions", "0").load()


def test_start_timestamp_json_after_the_end_one_fails_at_load(
    spark: Any, bucket: dict[str, Any]
) -> None:
    """Spark compares per-partition timestamps before resolving them: T0+100 > T0+50 fails,
    though both resolve to offset 5 here (the late record)."""
    with pytest.raises(Exception, match=(
        f"The specified start timestamp {T0 + 100} is greater than the end timestamp {T0 + 50} "
        "for topic t partition 0"
    )):  # fmt: skip
        reader(spark, bucket).option("startingOffsetsByTimestamp", by_partition(T0 + 100)).option(
            "endingOffsetsByTimestamp", by_partition(T0 + 50)
        ).load()
