from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThanOrEqual, StringStartsWith

from tiered_mq.spark.bucket import BucketURL, parse_bucket_url
from tiered_mq.spark.datasource import narrow
from tiered_mq.spark.options import EARLIEST, LATEST, PartitionBounds, ReadOptions
from tiered_mq.spark.planner import Pushed


def test_offsets_json_and_defaults() -> None:
    opts = ReadOptions.parse(
        {
            "PATH": "s3://b/p",
            "topics": "orders, refunds",
            "startingOffsets": '{"orders": {"0": 23, "1": -2}}',
            "endingoffsets": "latest",
        }
    )
    assert opts.topics == ("orders", "refunds")
    assert opts.bounds("orders", 0) == PartitionBounds(23, LATEST)
    assert opts.bounds("orders", 1) == PartitionBounds(EARLIEST, LATEST)
    assert opts.bounds("refunds", 3) == PartitionBounds(EARLIEST, LATEST)
    with pytest.raises(ValueError, match=r"not read: \{b-0\}"):
        ReadOptions.parse(
            {"path": "s3://b", "topic": "a", "endingOffsets": '{"a": {"0": 1}, "b": {"0": 1}}'}
        ).check_assigned({"a": [0]})


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("startingOffsets", '{"t": {"0": 5}}'),
        ("endingOffsets", '{"t": {"0": 5}, "u": {"0": 5}}'),
        ("startingOffsetsByTimestamp", '{"t": {"0": 1000}}'),
        ("endingOffsetsByTimestamp", '{"t": {"0": 1000}, "u": {"0": 1000}}'),
    ],
)
def test_offsets_json_must_name_every_partition_read(option: str, value: str) -> None:
    """Spark's KafkaOffsetReaderAdmin: a JSON in effect names exactly the partitions read."""
    opts = ReadOptions.parse({"path": "s3://b", "topics": "t,u", option: value})
    with pytest.raises(ValueError, match=(
        f"If {option} contains specific offsets, you must specify all TopicPartitions.*"
        r"Assigned: \{t-0, t-1, u-0\}.*missing: \{.*t-1.*\}"
    )):  # fmt: skip
        opts.check_assigned({"t": [0, 1], "u": [0]})
    every = json.dumps({"t": {"0": 5, "1": 5}, "u": {"0": 5}})
    ReadOptions.parse({"path": "s3://b", "topics": "t,u", option: every}).check_assigned(
        {"t": [0, 1], "u": [0]}
    )


def test_offsets_json_overridden_by_a_timestamp_is_not_checked() -> None:
    """As in Spark, only the bound in effect is looked at."""
    opts = ReadOptions.parse(
        {
            "path": "s3://b",
            "topic": "t",
            "startingOffsets": '{"t": {"0": 5}}',
            "startingOffsetsByTimestamp": '{"t": {"0": 1000}}',
            "endingOffsets": '{"t": {"0": 9}}',
            "endingTimestamp": "2000",
        }
    )
    with pytest.raises(ValueError, match="If startingOffsetsByTimestamp contains"):
        opts.check_assigned({"t": [0, 1]})
    replace(opts, starting_timestamp=1000).check_assigned({"t": [0, 1]})


def test_timestamp_takes_precedence_over_offsets() -> None:
    opts = ReadOptions.parse(
        {
            "path": "file:///x",
            "topic": "t",
            "startingOffsets": '{"t": {"0": 5}}',
            "startingTimestamp": "1000",
            "endingOffsetsByTimestamp": '{"t": {"1": 2000}}',
        }
    )
    assert opts.bounds("t", 0) == PartitionBounds(EARLIEST, LATEST, 1000, None)
    assert opts.bounds("t", 1) == PartitionBounds(EARLIEST, LATEST, 1000, 2000)


@pytest.mark.parametrize(
    "options",
    [
        {"topic": "t"},
        {"path": "s3://b"},
        {"path": "s3://b", "topic": "t", "topicPattern": "x"},
        {"path": "s3://b", "topic": "t", "startingOffsets": "{bad"},
        {"path": "s3://b", "topic": "t", "isolation.level": "dirty"},
        {"path": "s3://b", "topic": "t", "maxBytesPerSplit": "-1"},
        {"path": "s3://b", "topic": "t", "s3.pathStyle": "maybe"},
        {"path": "s3://b", "topic": "t", "failOnDataLoss": "no"},
        {"path": "s3://b", "topic": "t", "startingOffsets": '{"t": {"0": 3.5}}'},
        {"path": "s3://b", "topic": "t", "endingOffsets": '{"t": {"0": true}}'},
        {"path": "s3://b", "topic": "t", "startingOffsetsByTimestamp": '{"t": {"0": "1"}}'},
    ],
)
def test_bad_options_raise(options: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        ReadOptions.parse(options)


def test_unknown_options_raise_naming_them() -> None:
    """A misspelt option would otherwise be ignored: startingOffset reads the whole topic."""
    with pytest.raises(
        ValueError, match=r"unknown option\(s\) 'startingOffset'; .* startingOffsets"
    ):
        ReadOptions.parse({"path": "s3://b", "topic": "t", "startingOffset": '{"t": {"0": 5}}'})
    with pytest.raises(ValueError, match="'kafka\\.bootstrap\\.servers'"):
        ReadOptions.parse({"path": "s3://b", "topic": "t", "kafka.bootstrap.servers": "h:9092"})
    known = ReadOptions.parse(
        {"PATH": "s3://b", "Topic": "t", "FAILONDATALOSS": "false", "filterPushdown": "true"}
    )
    assert not known.fail_on_data_loss
    assert ReadOptions.parse({"path": "s3://b", "topic": "t"}).fail_on_data_loss


def test_s3_settings_and_isolation() -> None:
    opts = ReadOptions.parse(
        {
            "path": "s3a://bucket/pre/fix",
            "subscribePattern": "o.*",
            "s3.endpoint": "http://h:1",
            "s3.accessKey": "a",
            "s3.secretKey": "s",
            "region": "eu-west-1",
            "s3.pathStyle": "true",
            "kafka.isolation.level": "read_uncommitted",
        }
    )
    assert opts.s3.endpoint_url == "http://h:1" and opts.s3.path_style
    assert opts.s3.region == "eu-west-1" and not opts.read_committed
    assert parse_bucket_url(opts.path) == BucketURL("s3", "bucket", "pre/fix")
    assert parse_bucket_url("file:///d/b?prefix=p/") == BucketURL("file", "/d/b", "p")


def test_narrow_by_pushed_filters() -> None:
    p = Pushed()
    p = narrow(p, EqualTo(("partition",), 3))
    p = narrow(p, In(("partition",), (1, 3, 4)))
    p = narrow(p, GreaterThan(("offset",), 10))
    p = narrow(p, LessThanOrEqual(("offset",), 99))
    p = narrow(p, EqualTo(("topic",), "orders"))
    p = narrow(p, StringStartsWith(("topic",), "x"))  # of no use: ignored
    ts = datetime(2024, 1, 1, tzinfo=UTC)
    p = narrow(p, GreaterThan(("timestamp",), ts))
    assert p == Pushed(
        topics=frozenset({"orders"}),
        partitions=frozenset({3}),
        offset_low=11,
        offset_high=100,
        min_timestamp_us=int(ts.timestamp()) * 1_000_000,
    )


def test_the_jobs_options_are_all_known() -> None:
    import argparse

    from tiered_mq.spark.jobs import add_source_arguments, source_options

    parser = argparse.ArgumentParser()
    add_source_arguments(parser)
    args = parser.parse_args(
        ["--bucket", "s3://b/p", "--topic", "t", "--starting-timestamp", "5",
         "--ending-timestamp", "9", "--max-bytes-per-split", "100", "--s3-endpoint", "http://h",
         "--s3-region", "r", "--s3-access-key", "a", "--s3-secret-key", "s", "--s3-path-style",
         "--read-uncommitted"]
    )  # fmt: skip
    opts = ReadOptions.parse(source_options(args))
    assert opts.fail_on_data_loss and opts.max_bytes_per_split == 100
    lenient = parser.parse_args(["--bucket", "s3://b", "--topic", "t", "--no-fail-on-data-loss"])
    assert not ReadOptions.parse(source_options(lenient)).fail_on_data_loss
