"""``spark.read.format("tiered-mq")``: a PySpark Python Data Source over the bucket alone.

Usage::

    from tiered_mq.spark.datasource import TieredMQDataSource
    spark.dataSource.register(TieredMQDataSource)
    df = (spark.read.format("tiered-mq")
          .option("path", "s3://bucket/prefix").option("topic", "orders")
          .option("s3.endpoint", "http://minio:9000").option("s3.pathStyle", "true")
          .load())

or ``tiered_mq.spark.register(spark)``, which also turns on Spark's Python filter pushdown
(``spark.sql.python.filterPushdown.enabled``) and registers the variant whose reader implements
``pushFilters``: predicates on ``topic``, ``partition``, ``offset`` (=, <, <=, >, >=, IN) and lower
bounds on ``timestamp`` then prune partitions, segments and byte ranges before anything is
read. (Spark refuses a reader implementing ``pushFilters`` while that setting is off, so the
plain ``TieredMQDataSource`` does not implement it; option ``filterPushdown=true`` selects the
pushing reader when the setting is already on.) Pushed filters are still evaluated by Spark
afterwards: pruning is conservative, never the only filter.

Schema: Spark's Kafka source (see columnar.py), the ``headers`` column only with
``includeHeaders=true`` (as in Spark); options: see options.py. Planning (driver)
reads manifests, and offset/transaction indexes where needed (planner.py); each task reads one
byte range of one ``.log`` object (segment_reader.py) and yields ``pyarrow.RecordBatch``es.
Nothing here is asynchronous: executors use blocking boto3.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)

from tiered_mq.spark.bucket import open_bucket
from tiered_mq.spark.columnar import SPARK_SCHEMA
from tiered_mq.spark.options import ReadOptions
from tiered_mq.spark.planner import Pushed, SegmentSplit, plan
from tiered_mq.spark.segment_reader import read_split

SPARK_SCHEMA_NO_HEADERS = SPARK_SCHEMA.rsplit(", headers", 1)[0]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TieredMQDataSource(DataSource):  # type: ignore[misc]
    """Batch reads of topics from a tiered-mq bucket, with Spark's Kafka source schema."""

    pushdown = False

    @classmethod
    def name(cls) -> str:
        return "tiered-mq"

    def schema(self) -> str:
        # parsed here too so that bad options fail at load(), not at the first action
        include = ReadOptions.parse(dict(self.options)).include_headers
        return SPARK_SCHEMA if include else SPARK_SCHEMA_NO_HEADERS

    def reader(self, schema: Any) -> DataSourceReader:
        opts = ReadOptions.parse(dict(self.options))
        wants = str(self.options.get("filterPushdown", "")).strip().lower() == "true"
        if self.pushdown or wants:
            return TieredMQPushdownReader(opts)
        return TieredMQReader(opts)


class TieredMQPushdownDataSource(TieredMQDataSource):
    """The same source whose reader takes pushed-down filters (see :func:`register`)."""

    pushdown = True


class TieredMQReader(DataSourceReader):  # type: ignore[misc]
    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        self.pushed = Pushed()

    def partitions(self) -> Sequence[InputPartition]:
        bucket = open_bucket(self.opts.path, self.opts.s3)
        return plan(bucket, self.opts, self.pushed)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentSplit):
            return  # Spark reads one placeholder partition when the plan has none
        bucket = open_bucket(self.opts.path, self.opts.s3)
        for batch in read_split(bucket, partition):
            yield batch if self.opts.include_headers else batch.drop_columns(["headers"])


class TieredMQPushdownReader(TieredMQReader):
    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for f in filters:
            self.pushed = narrow(self.pushed, f)
            yield f  # Spark still evaluates it: pruning is by segment, not by row


def narrow(pushed: Pushed, f: Filter) -> Pushed:
    """``pushed`` further bounded by filter ``f`` (unchanged when ``f`` is of no use)."""
    attribute: tuple[str, ...] = tuple(getattr(f, "attribute", ()))
    if len(attribute) != 1:
        return pushed
    column, value = attribute[0], getattr(f, "value", None)
    if column in ("topic", "partition") and isinstance(f, EqualTo | In):
        values: set[Any] = set(f.value) if isinstance(f, In) else {value}
        if column == "topic":
            topics = frozenset(v for v in values if isinstance(v, str))
            old_t = pushed.topics
            return _replace(pushed, topics=topics if old_t is None else old_t & topics)
        ints = frozenset(v for v in values if isinstance(v, int))
        old_p = pushed.partitions
        return _replace(pushed, partitions=ints if old_p is None else old_p & ints)
    if column == "offset" and isinstance(value, int) and not isinstance(value, bool):
        low, high = _range(f, value)
        if low is not None and (pushed.offset_low is None or low > pushed.offset_low):
            pushed = _replace(pushed, offset_low=low)
        if high is not None and (pushed.offset_high is None or high < pushed.offset_high):
            pushed = _replace(pushed, offset_high=high)
        return pushed
    if column == "timestamp" and isinstance(value, datetime):
        us = _micros(value)
        if isinstance(f, GreaterThan | GreaterThanOrEqual | EqualTo) and (
            pushed.min_timestamp_us is None or us > pushed.min_timestamp_us
        ):
            return _replace(pushed, min_timestamp_us=us)
    return pushed


def _range(f: Filter, value: int) -> tuple[int | None, int | None]:
    """``[low, high)`` of offsets a comparison with ``value`` admits."""
    if isinstance(f, EqualTo):
        return value, value + 1
    if isinstance(f, GreaterThan):
        return value + 1, None
    if isinstance(f, GreaterThanOrEqual):
        return value, None
    if isinstance(f, LessThan):
        return None, value
    if isinstance(f, LessThanOrEqual):
        return None, value + 1
    return None, None


def _micros(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.astimezone()  # PySpark hands naive datetimes in the local time zone
    return (value - _EPOCH) // timedelta(microseconds=1)


def _replace(pushed: Pushed, **changes: Any) -> Pushed:
    from dataclasses import replace

    return replace(pushed, **changes)


def register(spark: Any) -> None:
    """Register ``tiered-mq`` on ``spark`` with filter pushdown enabled."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(TieredMQPushdownDataSource)
