"""Reproduce a range of a topic from the bucket back into a topic, through a broker.

    spark-submit spark/reproduce.py --bucket s3://bucket/prefix --topic orders \\
        --starting-timestamp 1700000000000 --bootstrap broker:9092 --target-topic orders-replay
    python spark/reproduce.py --bucket file:///data/cold --topic orders \\
        --bootstrap localhost:9092 --target-topic orders-copy

Keys, values, headers and (CreateTime) timestamps are preserved. Order is preserved per source
partition: rows are repartitioned by (topic, partition) and sorted by offset, so each source
partition is produced by one task, in offset order, with an idempotent confluent-kafka
producer. ``--partitioning same`` (default) writes source partition N to target partition N
(the target needs at least as many partitions); ``key`` lets the producer's partitioner choose.

Before Spark starts, ``--partitioning same`` checks the target on the driver
(``check_target``): a target topic that does not exist, or that has fewer partitions than the
source topics have in the bucket (their topic manifests; ``--where`` is not looked at, so with
it only the existence is checked), ends the job with one line naming the counts and exit
status 1, before any record is sent. Without the check, a producer would auto-create the
topic with the broker's ``num.partitions`` and fail on the first record of a partition it
lacks (librdkafka's ``Unknown partition``), after other partitions had been produced.

Progress: every ``--progress-interval`` seconds the driver prints tasks done / total and the
records acknowledged so far (an accumulator fed by finished tasks); a task that cannot deliver
every record (after librdkafka's own retries) fails, and so does the job.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from tiered_mq.spark.jobs import add_source_arguments, session, source, source_options


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser)
    dst = parser.add_argument_group("target")
    dst.add_argument("--bootstrap", required=True, help="bootstrap.servers of the target")
    dst.add_argument("--target-topic", required=True)
    dst.add_argument("--partitioning", choices=["same", "key"], default="same")
    dst.add_argument("--producer-config", action="append", default=[], metavar="KEY=VALUE",
                     help="extra librdkafka producer settings")  # fmt: skip
    dst.add_argument("--parallelism", type=int, default=0,
                     help="producing tasks (default: Spark's default parallelism)")  # fmt: skip
    dst.add_argument("--progress-interval", type=float, default=5.0)
    return parser.parse_args(argv)


def producer_config(args: argparse.Namespace) -> dict[str, str]:
    config = {
        "bootstrap.servers": args.bootstrap,
        "enable.idempotence": "true",
        "acks": "all",
        "linger.ms": "20",
        "compression.type": "lz4",
    }
    for item in args.producer_config:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--producer-config expects KEY=VALUE, got {item!r}")
        config[key.strip()] = value.strip()
    return config


def source_partition_count(args: argparse.Namespace) -> int:
    """How many partitions the target needs to receive partition N as N: one more than the
    greatest partition of the source topics, from the bucket's topic manifests (or partition
    folders), restricted to ``assign``'s when given; 0 when the bucket has none of them."""
    from tiered_mq.spark.bucket import open_bucket
    from tiered_mq.spark.options import ReadOptions
    from tiered_mq.spark.planner import list_topics, topic_partitions

    opts = ReadOptions.parse(source_options(args))
    bucket = open_bucket(opts.path, opts.s3)
    greatest = -1
    for topic in list_topics(bucket, opts):
        partitions, _ = topic_partitions(bucket, topic)
        if opts.assign is not None:
            partitions = [p for p in partitions if p in opts.assign.get(topic, ())]
        greatest = max([greatest, *partitions])
    return greatest + 1


def target_partition_count(config: dict[str, str], topic: str, timeout: float = 30.0) -> int:
    """The target topic's partition count, or -1 when it does not exist (the metadata request
    asks the broker not to create it)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({**config, "allow.auto.create.topics": "false"})
    metadata = admin.list_topics(topic=topic, timeout=timeout)
    found = metadata.topics.get(topic)
    if found is None or (
        found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    ):
        return -1
    if found.error is not None:
        raise KafkaException(found.error)
    return len(found.partitions)


def check_target(args: argparse.Namespace, config: dict[str, str]) -> None:
    """``--partitioning same``: refuse (SystemExit with the reason) a target topic that is
    missing or has fewer partitions than the source, before anything is produced."""
    if args.partitioning != "same":
        return
    have = target_partition_count(config, args.target_topic)
    if have < 0:
        needed = source_partition_count(args)
        raise SystemExit(
            f"reproduce: target topic {args.target_topic!r} does not exist; create it with at "
            f"least {max(needed, 1)} partition(s) (--partitioning same writes source partition N "
            f"to partition N), or use --partitioning key"
        )
    if args.where:
        return  # the filter may leave out partitions: only the producer can tell
    needed = source_partition_count(args)
    if have < needed:
        raise SystemExit(
            f"reproduce: target topic {args.target_topic!r} has {have} partition(s), the source "
            f"{needed}; --partitioning same writes source partition N to partition N: add "
            f"partitions to the target, or use --partitioning key"
        )


def produce_rows(
    rows: Iterator[Any], config: dict[str, str], topic: str, same_partition: bool
) -> int:
    """Produce ``rows`` in order; returns the number delivered, raises if any failed."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer(config)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    sent = 0
    for row in rows:
        kwargs: dict[str, Any] = {
            "key": None if row.key is None else bytes(row.key),
            "value": None if row.value is None else bytes(row.value),
            "timestamp": row.ts_ms or 0,
            "on_delivery": on_delivery,
        }
        if row.headers:
            kwargs["headers"] = [
                (h.key, None if h.value is None else bytes(h.value)) for h in row.headers
            ]
        if same_partition:
            kwargs["partition"] = row.partition
        while True:
            try:
                producer.produce(topic, **kwargs)
                break
            except BufferError:
                producer.poll(0.1)  # local queue full: let deliveries drain
        sent += 1
        if errors:
            break
        if sent % 10_000 == 0:
            producer.poll(0)
    remaining = producer.flush(120)
    if errors or remaining:
        detail = errors[0] if errors else f"{remaining} records undelivered after 120 s"
        raise KafkaException(f"reproduce to {topic}: {detail}")
    return sent


def report_progress(sc: Any, counter: Any, stop: threading.Event, interval: float) -> None:
    started = time.monotonic()
    while not stop.wait(interval):
        tracker = sc.statusTracker()
        done = total = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        elapsed = time.monotonic() - started
        print(
            f"reproduce: {done}/{total} tasks of the active stages, "
            f"{counter.value} records acknowledged, {elapsed:.0f} s",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check_target(args, producer_config(args))
    spark, created = session(args, "tiered-mq reproduce")
    stop = threading.Event()
    try:
        df = source(spark, args).selectExpr("*", "unix_millis(timestamp) AS ts_ms")
        # Each source partition hashes to one task; sorting keeps its offset order.
        width = args.parallelism or spark.sparkContext.defaultParallelism
        ordered = df.repartition(width, "topic", "partition").sortWithinPartitions(
            "topic", "partition", "offset"
        )
        config = producer_config(args)
        target, same = args.target_topic, args.partitioning == "same"
        counter = spark.sparkContext.accumulator(0)

        def produce_partition(rows: Iterator[Any]) -> None:
            counter.add(produce_rows(rows, config, target, same))

        progress = threading.Thread(
            target=report_progress,
            args=(spark.sparkContext, counter, stop, args.progress_interval),
            daemon=True,
        )
        progress.start()
        started = time.monotonic()
        ordered.foreachPartition(produce_partition)
        stop.set()
        elapsed = time.monotonic() - started
        rate = counter.value / elapsed if elapsed > 0 else 0.0
        print(
            f"reproduce: {counter.value} records to {target} via {args.bootstrap} "
            f"in {elapsed:.1f} s ({rate:,.0f} records/s)",
            flush=True,
        )
        return 0
    finally:
        stop.set()
        if created:
            spark.stop()


if __name__ == "__main__":
    sys.exit(main())
