"""Replay a range of a topic from the bucket to Parquet.

    spark-submit spark/replay.py --bucket s3://bucket/prefix --topic orders \\
        --starting-offsets '{"orders": {"0": 1000}}' --output s3a://lake/orders/
    python spark/replay.py --bucket file:///data/cold --topic orders --output /tmp/orders

Reads with the ``tiered-mq`` data source (no broker involved), writes the Kafka source schema
(key, value, topic, partition, offset, timestamp, timestampType, headers) as Parquet, by default
partitioned by ``topic`` and ``partition``. ``s3a://`` outputs need hadoop-aws on the cluster
(``--packages org.apache.hadoop:hadoop-aws:<hadoop version of the pyspark build>``); the
``--s3-*`` settings are passed to it as ``spark.hadoop.fs.s3a.*`` as well. Prints the number of
records written and the elapsed time; exit status 0 on success.
"""

from __future__ import annotations

import argparse
import sys
import time

from tiered_mq.spark.jobs import add_source_arguments, session, source


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser)
    out = parser.add_argument_group("output")
    out.add_argument("--output", required=True, help="Parquet path: local, file://, s3a://")
    out.add_argument("--mode", default="errorifexists",
                     choices=["errorifexists", "overwrite", "append", "ignore"])  # fmt: skip
    out.add_argument("--partition-by", default="topic,partition",
                     help="comma-separated columns, or 'none'")  # fmt: skip
    out.add_argument("--compression", default="zstd", help="Parquet codec")
    return parser.parse_args(argv)


def configure_s3a(spark: object, args: argparse.Namespace) -> None:
    conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    if args.s3_endpoint:
        conf.set("fs.s3a.endpoint", args.s3_endpoint)
    if args.s3_access_key and args.s3_secret_key:
        conf.set("fs.s3a.access.key", args.s3_access_key)
        conf.set("fs.s3a.secret.key", args.s3_secret_key)
    if args.s3_path_style:
        conf.set("fs.s3a.path.style.access", "true")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    spark, created = session(args, "tiered-mq replay")
    try:
        if args.output.startswith("s3a://"):
            configure_s3a(spark, args)
        started = time.monotonic()
        df = source(spark, args)
        counter = spark.sparkContext.accumulator(0)

        def count_rows(batches):  # type: ignore[no-untyped-def]
            for batch in batches:
                counter.add(batch.num_rows)
                yield batch

        df = df.mapInArrow(count_rows, df.schema)
        writer = df.write.mode(args.mode).option("compression", args.compression)
        columns = [c.strip() for c in args.partition_by.split(",") if c.strip()]
        if columns and columns != ["none"]:
            writer = writer.partitionBy(*columns)
        writer.parquet(args.output)
        elapsed = time.monotonic() - started
        print(
            f"replay: {counter.value} records of {args.topic or args.topic_pattern} "
            f"written to {args.output} in {elapsed:.1f} s"
        )
        return 0
    finally:
        if created:
            spark.stop()


if __name__ == "__main__":
    sys.exit(main())
