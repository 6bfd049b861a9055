"""Shared command-line plumbing of the Spark jobs in ``spark/`` (replay.py, reproduce.py).

``add_source_arguments(parser)`` declares the bucket/range arguments every job takes;
``source_options(args)`` turns them into data source options (an offsets JSON naming some
partitions is completed with every other partition of the topics read, from earliest or to
latest, since the data source, as Spark's Kafka source, wants all of them named);
``session(args, app)`` returns the SparkSession: the one spark-submit configured, else a local
one (``--master``, default ``local[*]``) when the job runs under plain ``python``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.options import EARLIEST, LATEST, ReadOptions
from tiered_mq.spark.planner import list_topics, topic_partitions


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_argument_group("source (the bucket)")
    src.add_argument("--bucket", required=True, help="s3://bucket/prefix or file:///dir")
    names = src.add_mutually_exclusive_group(required=True)
    names.add_argument("--topic", help="topic, or comma-separated topics")
    names.add_argument("--topic-pattern", help="regex over the topics in the bucket")
    src.add_argument("--starting-offsets", default="earliest",
                     help='earliest or JSON {"orders": {"0": 23}}')  # fmt: skip
    src.add_argument("--ending-offsets", default="latest",
                     help="latest or JSON (exclusive)")  # fmt: skip
    src.add_argument("--starting-timestamp", type=int, help="ms since the epoch")
    src.add_argument("--ending-timestamp", type=int, help="ms since the epoch (exclusive)")
    src.add_argument("--read-uncommitted", action="store_true",
                     help="keep records of aborted transactions")  # fmt: skip
    src.add_argument("--max-bytes-per-split", type=int, help="split larger .log objects")
    src.add_argument("--no-fail-on-data-loss", action="store_true",
                     help="failOnDataLoss=false: offsets below the log start read from it, "
                          "segments deleted during the job are skipped")  # fmt: skip
    src.add_argument("--where", help='a Spark SQL filter, e.g. "partition = 0"')
    s3 = parser.add_argument_group("S3 (defaults: the AWS chain and AWS_* variables)")
    s3.add_argument("--s3-endpoint", default=os.environ.get("AWS_ENDPOINT_URL"))
    s3.add_argument("--s3-region", default=os.environ.get("AWS_REGION"))
    s3.add_argument("--s3-access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"))
    s3.add_argument("--s3-secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"))
    s3.add_argument("--s3-path-style", action="store_true", help="endpoint/bucket/key URLs")
    parser.add_argument("--master", help="Spark master when run with plain python")


def source_options(args: argparse.Namespace) -> dict[str, str]:
    opts: dict[str, str] = {
        "path": args.bucket,
        "startingOffsets": args.starting_offsets,
        "endingOffsets": args.ending_offsets,
        "isolation.level": "read_uncommitted" if args.read_uncommitted else "read_committed",
        "failOnDataLoss": "false" if args.no_fail_on_data_loss else "true",
        "includeHeaders": "true",  # the jobs keep headers (Spark's default drops them)
    }
    if args.topic:
        opts["topics"] = args.topic
    else:
        opts["topicPattern"] = args.topic_pattern
    optional = {
        "startingTimestamp": args.starting_timestamp,
        "endingTimestamp": args.ending_timestamp,
        "maxBytesPerSplit": args.max_bytes_per_split,
        "s3.endpoint": args.s3_endpoint,
        "s3.region": args.s3_region,
        "s3.accessKey": args.s3_access_key,
        "s3.secretKey": args.s3_secret_key,
    }
    opts.update({k: str(v) for k, v in optional.items() if v is not None})
    if args.s3_path_style:
        opts["s3.pathStyle"] = "true"
    return _complete_offsets(opts)


def _complete_offsets(opts: dict[str, str]) -> dict[str, str]:
    """``opts`` with an offsets JSON naming every partition of the topics read: those it
    leaves out start at earliest (-2) or end at latest (-1). The jobs take a JSON of the
    partitions that matter, as their examples show; the data source refuses one that leaves
    partitions out, as Spark's Kafka source does."""
    parsed = ReadOptions.parse(opts)
    given = {
        "startingOffsets": (parsed.starting, EARLIEST),
        "endingOffsets": (parsed.ending, LATEST),
    }
    if not any(isinstance(spec, dict) for spec, _ in given.values()):
        return opts
    bucket = open_bucket(parsed.path, parsed.s3)
    partitions = {t: topic_partitions(bucket, t)[0] for t in list_topics(bucket, parsed)}
    for key, (spec, default) in given.items():
        if isinstance(spec, dict):
            full = {topic: dict(offsets) for topic, offsets in spec.items()}  # all it names
            for topic, ps in partitions.items():
                for p in ps:
                    full.setdefault(topic, {}).setdefault(p, default)
            opts[key] = json.dumps(
                {t: {str(p): o for p, o in offsets.items()} for t, offsets in full.items()}
            )
    return opts


def session(args: argparse.Namespace, app: str) -> tuple[Any, bool]:
    """(SparkSession, whether this call created it: then the job stops it at the end)."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    import tiered_mq.spark

    active = SparkSession.getActiveSession()
    builder = SparkSession.builder.appName(app)
    if active is None and not SparkConf().contains("spark.master"):
        builder = builder.master(args.master or "local[*]")  # plain `python job.py`
    spark = active or builder.getOrCreate()
    tiered_mq.spark.register(spark)
    return spark, active is None


def source(spark: Any, args: argparse.Namespace) -> Any:
    """The DataFrame of the requested range (``--where`` applied: pushed down when it can)."""
    reader = spark.read.format("tiered-mq")
    for key, value in source_options(args).items():
        reader = reader.option(key, value)
    df = reader.load()
    return df.where(args.where) if args.where else df
