"""Spark replay from the bucket vs consuming the same range through the broker.

    python benchmarks/bench_spark_replay.py [--records 5000000] [--codec none]

Setup (not timed): a SeaweedFS server and a `tiered-mq dev` broker. The records (100-byte
values, no key) are produced into the broker with confluent-kafka. If the broker tiers
(topic ``remote.storage.enable=true``, its cold tier on the SeaweedFS bucket), Spark reads the
segments the broker uploaded; otherwise the same records are written into the bucket by the
test writer (tests/unit/spark/bucket_builder.py) and the report says so.

Timed, in one run, over the same offset range:
- Spark (local[2], session start excluded): ``count()`` (the first one also starts the Python
  workers), ``count()`` again, and a Parquet write of every column;
- confluent-kafka consuming the range through the broker (assign, from offset 0 to the end);
- the columnar decoder alone on one core (``decode_split`` over one segment in this process).

Prints records/s of each, the ratios Spark / consumer (target >= 1.0) and decode records/s per
core.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.broker_process import BrokerProcess  # noqa: E402
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS  # noqa: E402
from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest  # noqa: E402
from tiered_mq.cold.object_store import open_sync_store  # noqa: E402
from tiered_mq.record.compression import codec_id  # noqa: E402

TOPIC = "bench"
PARTITIONS = 2
PREFIX = "cold"
SEGMENT_BYTES = 64 * 1024 * 1024


def produce(bootstrap: str, records: int, codec: str) -> None:
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "batch.num.messages": 10000,
            "batch.size": 1_000_000,
            "compression.type": codec,
            "acks": "1",
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    value = b"x" * 100
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, value=value, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 50_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    config = {
        "remote.storage.enable": "true",
        "segment.bytes": str(SEGMENT_BYTES),
        "local.retention.ms": "-2",
    }
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1, config=config)]).values():
        f.result(30)


def bucket_end_offsets(store: Any) -> dict[int, int]:
    """Next offset after the uploaded segments of each partition (0 when none)."""
    from tiered_mq.cold import layout
    from tiered_mq.cold.manifest import parse_partition_manifest
    from tiered_mq.errors import ObjectNotFoundError

    out = {}
    for p in range(PARTITIONS):
        try:
            data, _ = store.get(layout.manifest_key(PREFIX, TOPIC, p))
            out[p] = parse_partition_manifest(data).next_offset()
        except ObjectNotFoundError:
            out[p] = 0
    return out


def write_bucket_ourselves(store: Any, records: int, codec: int) -> dict[int, int]:
    write_topic_manifest(store, PREFIX, TOPIC, PARTITIONS)
    ends = {}
    ts = int(time.time() * 1000)
    rows = [(None, b"x" * 100, (), ts)] * 2000
    for p in range(PARTITIONS):
        w = PartitionWriter(store, PREFIX, TOPIC, p)
        size = 0
        for _ in range(records // PARTITIONS // len(rows)):
            w.append(rows, compression=codec)
            size += len(w.batches[-1])
            if size >= SEGMENT_BYTES:
                w.roll()
                size = 0
        if w.batches:
            w.roll()
        ends[p] = w.next_offset
    return ends


def consume(bootstrap: str, ends: dict[int, int]) -> tuple[int, float]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{time.time()}",
            "enable.auto.commit": "false",
            "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 10485760,
            "queued.max.messages.kbytes": 262144,
        }
    )
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in ends])
    want = sum(ends.values())
    got = 0
    last = dict.fromkeys(ends, -1)
    started = time.perf_counter()
    progress_at = started
    while got < want:
        for msg in consumer.consume(10000, 1.0):
            if not msg.error() and msg.offset() < ends[msg.partition()]:
                got += 1
                last[msg.partition()] = msg.offset()
                progress_at = time.perf_counter()
        if time.perf_counter() - progress_at > 30:
            print(f"consumer stalled for 30 s at offsets {last} (ends {ends}); giving up")
            break
    elapsed = (time.perf_counter() if got >= want else progress_at) - started
    consumer.close()
    return got, elapsed


def spark_run(options: dict[str, str], out_dir: Path) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pyspark.sql import SparkSession

        import tiered_mq.spark

        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "4g")
            .getOrCreate()
        )
    spark.sparkContext.setLogLevel("ERROR")
    tiered_mq.spark.register(spark)
    reader = spark.read.format("tiered-mq")
    for k, v in options.items():
        reader = reader.option(k, v)
    df = reader.load()
    started = time.perf_counter()
    count = df.count()
    count_s = time.perf_counter() - started  # includes starting the Python workers
    started = time.perf_counter()
    df.count()
    warm_s = time.perf_counter() - started
    started = time.perf_counter()
    df.write.mode("overwrite").parquet(str(out_dir))
    write_s = time.perf_counter() - started
    spark.stop()
    return {"records": count, "count_s": count_s, "warm_s": warm_s, "write_s": write_s}


def decode_one_core(store: Any, options: dict[str, str]) -> float:
    from tiered_mq.spark.bucket import open_bucket
    from tiered_mq.spark.options import ReadOptions
    from tiered_mq.spark.planner import Pushed, plan
    from tiered_mq.spark.segment_reader import decode_split, fetch

    opts = ReadOptions.parse(options)
    bucket = open_bucket(opts.path, opts.s3)
    split = plan(bucket, opts, Pushed())[0]
    data = fetch(bucket, split)
    best = 0.0
    for _ in range(3):
        started = time.perf_counter()
        rows = sum(b.num_rows for b in decode_split(data, split, "bench"))
        best = max(best, rows / (time.perf_counter() - started))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description="Spark replay vs broker consume")
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--codec", default="none", help="none, gzip, snappy, lz4, zstd")
    parser.add_argument("--tier-wait", type=float, default=120.0,
                        help="seconds to wait for the broker's uploads")  # fmt: skip
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    s3 = SeaweedFS(work / "s3")
    s3.start()
    bucket = s3.new_bucket("bench")
    store = open_sync_store(f"s3://{bucket}", **s3.store_options())
    broker = BrokerProcess(
        work / "broker",
        extra_args=["--cold-url", f"s3://{bucket}/{PREFIX}", "--s3-endpoint", s3.endpoint_url],
        env={
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
        },
    )
    try:
        broker.start()
        create_topic(broker.bootstrap)
        started = time.perf_counter()
        produce(broker.bootstrap, args.records, args.codec)
        print(f"produced {args.records:,} records in {time.perf_counter() - started:.1f} s")
        deadline = time.monotonic() + args.tier_wait
        ends = bucket_end_offsets(store)
        while sum(ends.values()) < args.records * 0.8 and time.monotonic() < deadline:
            time.sleep(2)
            ends = bucket_end_offsets(store)
        source = "segments uploaded by the broker"
        if not sum(ends.values()):
            source = "segments written by the test writer (the broker uploaded nothing)"
            ends = write_bucket_ourselves(store, args.records, codec_id(args.codec))
        total = sum(ends.values())
        print(f"bucket: {total:,} records in {source}")
        options = {
            "path": f"s3://{bucket}/{PREFIX}",
            "topic": TOPIC,
            "endingOffsets": json.dumps({TOPIC: {str(p): e for p, e in ends.items()}}),
            "s3.endpoint": s3.endpoint_url,
            "s3.accessKey": ACCESS_KEY,
            "s3.secretKey": SECRET_KEY,
            "s3.region": "us-east-1",
            "s3.pathStyle": "true",
        }
        got, consume_s = consume(broker.bootstrap, ends)
        spark = spark_run(options, work / "parquet")
        per_core = decode_one_core(store, options)
    finally:
        broker.stop()
        s3.close()
        shutil.rmtree(work, ignore_errors=True)
    assert spark["records"] == total, (spark["records"], total)
    consume_rate = got / consume_s
    count_rate = total / spark["count_s"]
    write_rate = total / spark["write_s"]
    lines = [
        f"records: {total:,} x 100 B values, codec {args.codec}, bucket: {source}",
        f"broker consume (confluent-kafka): {consume_rate:12,.0f} records/s"
        f" ({got:,} in {consume_s:.1f} s)",
        f"spark count (local[2]):           {count_rate:12,.0f} records/s"
        f" ({spark['count_s']:.1f} s)",
        f"spark count again (warm workers): {total / spark['warm_s']:12,.0f} records/s"
        f" ({spark['warm_s']:.1f} s)",
        f"spark parquet write (local[2]):   {write_rate:12,.0f} records/s"
        f" ({spark['write_s']:.1f} s)",
        f"ratio count / consume:            {count_rate / consume_rate:12.2f} (target >= 1.0)",
        f"ratio parquet / consume:          {write_rate / consume_rate:12.2f}",
        f"decode per core (columnar):       {per_core:12,.0f} records/s",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
