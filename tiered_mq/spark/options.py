"""The data source's options, parsed once on the driver (names as in Spark's Kafka source).

=============================  ================================================================
option (case-insensitive)      meaning
=============================  ================================================================
path                           ``s3://bucket/prefix`` (``s3a://`` too) or ``file:///dir``
topic / topics / subscribe     one topic, or a comma-separated list
assign                         JSON ``{"orders": [0, 1], "refunds": [2]}``: those partitions
                               only (each must exist in the bucket)
topicPattern/subscribePattern  a regex matched (fully) against the topic names in the bucket:
                               Python's ``re`` syntax, where Spark's Kafka source takes a Java
                               regex (the common syntax is the same)
startingOffsets                ``earliest`` (default) or JSON ``{"orders": {"0": 23, "1": -2}}``
                               (-2 earliest); ``latest`` and -1 are refused, as Spark refuses
                               them in batch queries
endingOffsets                  ``latest`` (default) or JSON (exclusive; -1 latest);
                               ``earliest`` and -2 are refused, as in Spark
startingTimestamp              ms: start at the first record with timestamp >= it (takes
                               precedence over startingOffsetsByTimestamp and startingOffsets,
                               like Spark)
endingTimestamp                ms: stop before the first record with timestamp >= it (takes
                               precedence over endingOffsetsByTimestamp and endingOffsets)
startingOffsetsByTimestamp     JSON ``{"orders": {"0": 1700000000000}}``, per partition
endingOffsetsByTimestamp       idem for the end
startingOffsetsByTimestampStrategy
                               ``error`` (default, as Spark): a start timestamp that no record
                               of a partition reaches fails the read; ``latest``: that
                               partition starts at its latest offset (reads nothing)
isolation.level                ``read_committed`` (default) or ``read_uncommitted``
                               (``kafka.isolation.level`` is accepted too)
maxBytesPerSplit               split .log objects larger than this at offset-index positions
                               (default 128 MiB)
minPartitions                  as in Spark: when the read has fewer splits (Spark tasks) than
                               this, large objects are split further so that there are about
                               this many (at offset-index positions, so approximately)
includeHeaders                 ``false`` (default, as Spark): no ``headers`` column;
                               ``true``: the ``headers`` column is present
failOnDataLoss                 ``true`` (default, as Spark): a JSON starting offset below the
                               bucket's log start offset (deleted by retention) fails the
                               read, and so does a ``.log`` object deleted after planning;
                               ``false``: start at the log start, skip the deleted object
filterPushdown                 ``true``: the reader takes pushed-down filters (datasource.py)
s3.endpoint, s3.region,        S3 client settings; unset ones come from the AWS chain
s3.accessKey, s3.secretKey,    (``region`` is accepted for ``s3.region``)
s3.sessionToken, s3.pathStyle
=============================  ================================================================

A per-partition JSON in effect (startingOffsets, endingOffsets, and the ``ByTimestamp`` ones;
one that a timestamp option overrides is not looked at) names every partition read and only
those, as Spark's Kafka source demands (KafkaOffsetReaderAdmin): give -2 (earliest) or -1
(latest) for partitions whose bound does not matter. Otherwise the read fails when it is
planned, naming the partitions missing and those not read.

An option that is not in the table above raises ValueError (a misspelt ``startingOffset``
would otherwise read the whole topic), and so do an offset or timestamp in a JSON that is not
an integer and a start offset above the end offset given for the same partition.
A start that resolves past the end (a timestamp; planner.py) fails the read, as in Spark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from tiered_mq.spark.bucket import S3Settings

EARLIEST: Final = -2
LATEST: Final = -1
DEFAULT_MAX_BYTES_PER_SPLIT: Final = 128 * 1024 * 1024

PartitionMap = dict[str, dict[int, int]]

#: every option the source takes (names are case-insensitive)
OPTION_NAMES: Final = (
    "path", "topic", "topics", "subscribe", "topicPattern", "subscribePattern", "assign",
    "startingOffsets", "endingOffsets", "startingTimestamp", "endingTimestamp",
    "startingOffsetsByTimestamp", "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy", "isolation.level",
    "kafka.isolation.level", "maxBytesPerSplit", "minPartitions", "includeHeaders",
    "failOnDataLoss",
    "filterPushdown", "s3.endpoint", "s3.region", "region", "s3.accessKey", "s3.secretKey",
    "s3.sessionToken", "s3.pathStyle",
)  # fmt: skip
_KNOWN: Final = frozenset(n.lower() for n in OPTION_NAMES)


@dataclass(frozen=True)
class PartitionBounds:
    """What to read of one partition: offsets ``[start, end)`` (EARLIEST / LATEST allowed),
    optionally cut further by timestamps (first record with timestamp >= ...)."""

    start: int = EARLIEST
    end: int = LATEST
    start_timestamp: int | None = None
    end_timestamp: int | None = None


@dataclass(frozen=True)
class ReadOptions:
    path: str
    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    assign: dict[str, tuple[int, ...]] | None = None  # option assign: topic -> partitions
    starting: int | PartitionMap = EARLIEST
    ending: int | PartitionMap = LATEST
    starting_timestamp: int | None = None
    ending_timestamp: int | None = None
    starting_by_timestamp: PartitionMap = field(default_factory=dict)
    ending_by_timestamp: PartitionMap = field(default_factory=dict)
    read_committed: bool = True
    max_bytes_per_split: int = DEFAULT_MAX_BYTES_PER_SPLIT
    min_partitions: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True
    no_match_latest: bool = False  # startingOffsetsByTimestampStrategy=latest
    s3: S3Settings = field(default_factory=S3Settings)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        unknown = sorted(k for k in options if k.lower() not in _KNOWN)
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(map(repr, unknown))}; this source reads the "
                f"bucket and takes: {', '.join(OPTION_NAMES)}"
            )
        o = {k.lower(): v for k, v in options.items()}
        path = o.get("path")
        if not path:
            raise ValueError("option 'path' is required (s3://bucket/prefix or file:///dir)")
        names = o.get("topics") or o.get("topic") or o.get("subscribe") or ""
        topics = tuple(t.strip() for t in names.split(",") if t.strip())
        pattern = o.get("topicpattern") or o.get("subscribepattern")
        assign = _assign(o["assign"]) if "assign" in o else None
        if bool(topics) + bool(pattern) + (assign is not None) != 1:
            raise ValueError(
                "give exactly one of 'topic'/'topics'/'subscribe', 'topicPattern'/"
                "'subscribePattern' and 'assign'"
            )
        if assign is not None:
            topics = tuple(assign)
        if pattern:
            _check_pattern(pattern, "topicPattern" if o.get("topicpattern") else "subscribePattern")
        isolation = (o.get("isolation.level") or o.get("kafka.isolation.level") or "").lower()
        if isolation not in ("", "read_committed", "read_uncommitted"):
            raise ValueError(f"isolation.level {isolation!r}: read_committed or read_uncommitted")
        parsed = cls(
            path=path,
            topics=topics,
            topic_pattern=pattern,
            assign=assign,
            starting=_offsets(o.get("startingoffsets"), EARLIEST, "startingOffsets"),
            ending=_offsets(o.get("endingoffsets"), LATEST, "endingOffsets"),
            starting_timestamp=_int(o.get("startingtimestamp"), "startingTimestamp"),
            ending_timestamp=_int(o.get("endingtimestamp"), "endingTimestamp"),
            starting_by_timestamp=_by_timestamp(o.get("startingoffsetsbytimestamp")),
            ending_by_timestamp=_by_timestamp(o.get("endingoffsetsbytimestamp")),
            read_committed=isolation != "read_uncommitted",
            max_bytes_per_split=_int(o.get("maxbytespersplit"), "maxBytesPerSplit")
            or DEFAULT_MAX_BYTES_PER_SPLIT,
            min_partitions=_int(o.get("minpartitions"), "minPartitions"),
            include_headers=_bool(o.get("includeheaders"), False),
            fail_on_data_loss=_bool(o.get("failondataloss"), True),
            no_match_latest=_strategy(o.get("startingoffsetsbytimestampstrategy")),
            s3=S3Settings(
                endpoint_url=o.get("s3.endpoint") or None,
                region=o.get("s3.region") or o.get("region") or None,
                access_key=o.get("s3.accesskey") or None,
                secret_key=o.get("s3.secretkey") or None,
                session_token=o.get("s3.sessiontoken") or None,
                path_style=_bool(o.get("s3.pathstyle"), False),
            ),
        )
        if parsed.max_bytes_per_split <= 0:
            raise ValueError("maxBytesPerSplit must be positive")
        if parsed.min_partitions is not None and parsed.min_partitions <= 0:
            raise ValueError("minPartitions must be positive")
        parsed._check_batch_limits()
        return parsed

    def _check_batch_limits(self) -> None:
        """Spark's rules for batch queries (KafkaSourceProvider): the start may not be latest,
        the end may not be earliest (each option only when it is the one in effect: a timestamp
        option takes precedence), and a start offset may not exceed the end offset given for the
        same partition. Messages are Spark's."""
        start_by_offsets = self.starting_timestamp is None and not self.starting_by_timestamp
        end_by_offsets = self.ending_timestamp is None and not self.ending_by_timestamp
        if start_by_offsets:
            if self.starting == LATEST:
                raise ValueError("starting offset can't be latest for batch queries on Kafka")
            for topic, partition, offset in _entries(self.starting):
                if offset == LATEST:
                    raise ValueError(
                        f"startingOffsets for {topic}-{partition} can't be latest for batch "
                        "queries on Kafka"
                    )
        if end_by_offsets:
            if self.ending == EARLIEST:
                raise ValueError("ending offset can't be earliest for batch queries on Kafka")
            for topic, partition, offset in _entries(self.ending):
                if offset == EARLIEST:
                    raise ValueError(
                        f"ending offset for {topic}-{partition} can't be earliest for batch "
                        "queries on Kafka"
                    )
        if start_by_offsets and end_by_offsets:
            _check_pairs(self.starting, self.ending, "offset")
        if self.starting_timestamp is None and self.ending_timestamp is None:
            _check_pairs(self.starting_by_timestamp, self.ending_by_timestamp, "timestamp")

    def specific_limits(self) -> list[tuple[str, PartitionMap]]:
        """The per-partition JSON options in effect, by name: startingOffsets only without a
        start timestamp option, startingOffsetsByTimestamp only without startingTimestamp (the
        same for the end), as Spark picks its KafkaOffsetRangeLimit."""
        out: list[tuple[str, PartitionMap]] = []
        if self.starting_timestamp is None:
            if self.starting_by_timestamp:
                out.append(("startingOffsetsByTimestamp", self.starting_by_timestamp))
            elif isinstance(self.starting, dict):
                out.append(("startingOffsets", self.starting))
        if self.ending_timestamp is None:
            if self.ending_by_timestamp:
                out.append(("endingOffsetsByTimestamp", self.ending_by_timestamp))
            elif isinstance(self.ending, dict):
                out.append(("endingOffsets", self.ending))
        return out

    def check_assigned(self, assigned: Mapping[str, Sequence[int]]) -> None:
        """Spark's rule (KafkaOffsetReaderAdmin.fetchPartitionOffsets): a per-partition JSON in
        effect names exactly the partitions read, ``assigned`` (every partition of the topics
        read, or option ``assign``'s), before any filter. Raises ValueError naming the option,
        the partitions it misses and those it names that are not read."""
        wanted = {(t, p) for t, parts in assigned.items() for p in parts}
        for name, spec in self.specific_limits():
            given = {(t, p) for t, parts in spec.items() for p in parts}
            if given == wanted:
                continue
            what = "-2 for earliest" if name.startswith("starting") else "-1 for latest"
            hint = f" Use {what}." if not name.endswith("Timestamp") else ""
            raise ValueError(
                f"If {name} contains specific offsets, you must specify all "
                f"TopicPartitions.{hint} Specified: {_tps(given)} Assigned: {_tps(wanted)}"
                f" (missing: {_tps(wanted - given)}; not read: {_tps(given - wanted)})"
            )

    def bounds(self, topic: str, partition: int) -> PartitionBounds:
        """Spark's precedence: startingTimestamp, then startingOffsetsByTimestamp, then
        startingOffsets (the same for the end)."""
        start = _pick(self.starting, topic, partition, EARLIEST)
        end = _pick(self.ending, topic, partition, LATEST)
        start_ts = self.starting_timestamp
        if start_ts is None:
            start_ts = self.starting_by_timestamp.get(topic, {}).get(partition)
        end_ts = self.ending_timestamp
        if end_ts is None:
            end_ts = self.ending_by_timestamp.get(topic, {}).get(partition)
        if start_ts is not None:
            start = EARLIEST  # a timestamp wins over startingOffsets, as in Spark
        if end_ts is not None:
            end = LATEST  # the end is the first record at the timestamp, else latest
        return PartitionBounds(start, end, start_ts, end_ts)


def _tps(tps: set[tuple[str, int]]) -> str:
    """TopicPartitions as Kafka prints them: ``{t-0, t-1}``."""
    return "{" + ", ".join(f"{t}-{p}" for t, p in sorted(tps)) + "}"


def _pick(spec: int | PartitionMap, topic: str, partition: int, default: int) -> int:
    if isinstance(spec, int):
        return spec
    return spec.get(topic, {}).get(partition, default)


def _offsets(raw: str | None, default: int, name: str) -> int | PartitionMap:
    if raw is None or not raw.strip():
        return default
    text = raw.strip()
    if text.lower() == "earliest":
        return EARLIEST
    if text.lower() == "latest":
        return LATEST
    spec = _partition_map(text, name)
    for parts in spec.values():
        for partition, offset in parts.items():
            if offset < EARLIEST:
                raise ValueError(f"{name}: offset {offset} of partition {partition} invalid")
    return spec


def _check_pairs(starting: int | PartitionMap, ending: int | PartitionMap, what: str) -> None:
    """Spark's check of JSON bounds given for the same partition (at load)."""
    for topic, partition, start in _entries(starting):
        end = _pick(ending, topic, partition, LATEST)
        if start >= 0 and end >= 0 and start > end:
            raise ValueError(
                f"The specified start {what} {start} is greater than the end {what} {end} for "
                f"topic {topic} partition {partition}"
            )


def _entries(spec: int | PartitionMap) -> list[tuple[str, int, int]]:
    if isinstance(spec, int):
        return []
    return [(t, p, o) for t, parts in spec.items() for p, o in parts.items()]


def _assign(raw: str) -> dict[str, tuple[int, ...]]:
    """Option ``assign``: ``{"topic": [0, 1]}``, as in Spark (its message when not an object)."""
    if not raw.strip().startswith("{"):
        raise ValueError(
            f"No topicpartitions to assign as specified value for option 'assign' is '{raw}'"
        )
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict):
            raise TypeError("not an object")
        out = {str(t): tuple(sorted({_json_int(p) for p in list(ps)})) for t, ps in doc.items()}
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f'assign: expected {{"topic": [0, 1]}} (partition numbers), got {raw!r}'
        ) from exc
    if not out or not all(out.values()):
        raise ValueError(
            f"No topicpartitions to assign as specified value for option 'assign' is '{raw}'"
        )
    return out


def _check_pattern(pattern: str, name: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"{name} {pattern!r} is not a valid regular expression: {exc}. tiered-mq matches "
            "topic names with Python's re module (fullmatch), where Spark's Kafka source uses "
            "java.util.regex; their common syntax is the same"
        ) from None


def _strategy(raw: str | None) -> bool:
    """startingOffsetsByTimestampStrategy: True for ``latest``, False for ``error``."""
    value = (raw or "error").strip().lower()
    if value not in ("error", "latest"):
        raise ValueError(
            f"startingOffsetsByTimestampStrategy {raw!r}: expected error (the default) or latest"
        )
    return value == "latest"


def _by_timestamp(raw: str | None) -> PartitionMap:
    if raw is None or not raw.strip():
        return {}
    return _partition_map(raw.strip(), "offsetsByTimestamp")


def _partition_map(text: str, name: str) -> PartitionMap:
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise TypeError("not an object")
        return {
            str(topic): {int(p): _json_int(v) for p, v in dict(parts).items()}
            for topic, parts in doc.items()
        }
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f'{name}: expected earliest, latest or {{"topic": {{"0": 23}}}}, got {text!r}'
        ) from exc


def _json_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _int(raw: str | None, name: str) -> int | None:
    if raw is None or not str(raw).strip():
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        raise ValueError(f"{name}: not an integer: {raw!r}") from None


def _bool(raw: str | None, default: bool) -> bool:
    if raw is None or not str(raw).strip():
        return default
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"expected true or false, got {raw!r}")
    return value == "true"
