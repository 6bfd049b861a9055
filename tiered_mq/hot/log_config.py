"""LogConfig: every topic-level config by its Kafka name, with Kafka's defaults.

``LogConfig.from_properties({"segment.bytes": "1048576"}, base=None)`` parses Kafka's string
form, checks types and ranges, and raises ``errors.InvalidConfigError`` worded as Kafka's: "Unknown
topic config name: <key>" (LogConfig.validateNames), or for a bad value its ``ConfigException``
"Invalid value <value> for configuration <key>: <reason>" (e.g. "Not a number of type LONG",
"Value must be at least -1", "String must be one of: compact, delete"). ``to_properties()``
returns every config as strings (for DescribeConfigs), ``DEFAULTS`` holds the default string of
each key and ``config_type(name)`` its type as Kafka's ``ConfigDef`` declares it (``INT``,
``LONG``, ...).

Sentinels follow Kafka: ``retention.ms = -1`` and ``retention.bytes = -1`` (any negative value)
keep forever; ``local.retention.ms/bytes = -2`` mean "same as retention.ms/bytes";
``flush.messages`` and ``flush.ms`` default to Long.MAX_VALUE, i.e. leave flushing to the OS.
Local retention is checked against retention on tiered topics only
(:func:`validate_local_retention`), as Kafka checks it. An empty ``cleanup.policy`` is legal, as
in Kafka: neither delete nor compact (hot/retention.py says what is deleted then).

``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
(Kafka's replication quotas, set by ``kafka-reassign-partitions --throttle``) are accepted,
checked as Kafka's ``ThrottledReplicaListValidator`` checks them (``*`` or
``partition:broker,...``), stored and described; with one broker there is no replication to
throttle, so they change nothing else.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tiered_mq.errors import InvalidConfigError
from tiered_mq.record.compression import DEFAULT_LEVELS as _LEVELS
from tiered_mq.record.compression import GZIP, LZ4, ZSTD

LONG_MAX: Final = 2**63 - 1
INT_MAX: Final = 2**31 - 1
TIMESTAMP_AFTER_MAX_MS_DEFAULT: Final = 3_600_000  # Kafka 4.0 (KIP-1030): one hour

COMPACT: Final = "compact"
DELETE: Final = "delete"
CREATE_TIME: Final = "CreateTime"
LOG_APPEND_TIME: Final = "LogAppendTime"
COMPRESSION_TYPES: Final = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


@dataclass(frozen=True)
class _Key:
    name: str  # Kafka's name
    field: str  # attribute of LogConfig
    kind: str  # "int" | "bool" | "float" | "enum" | "list" (in the order given, each once)
    # | "replicas" (Kafka's throttled replica lists)
    default: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()


_KEYS: Final = (
    _Key("segment.bytes", "segment_bytes", "int", "1073741824", 14, INT_MAX),
    _Key("segment.ms", "segment_ms", "int", "604800000", 1, LONG_MAX),
    _Key("segment.jitter.ms", "segment_jitter_ms", "int", "0", 0, LONG_MAX),
    _Key("segment.index.bytes", "segment_index_bytes", "int", "10485760", 4, INT_MAX),
    _Key("index.interval.bytes", "index_interval_bytes", "int", "4096", 0, INT_MAX),
    _Key("retention.ms", "retention_ms", "int", "604800000", -1, LONG_MAX),
    # any negative retention.bytes means no limit (Kafka declares it without a validator)
    _Key("retention.bytes", "retention_bytes", "int", "-1", -LONG_MAX - 1, LONG_MAX),
    _Key("local.retention.ms", "local_retention_ms", "int", "-2", -2, LONG_MAX),
    _Key("local.retention.bytes", "local_retention_bytes", "int", "-2", -2, LONG_MAX),
    _Key("flush.messages", "flush_messages", "int", str(LONG_MAX), 1, LONG_MAX),
    _Key("flush.ms", "flush_ms", "int", str(LONG_MAX), 0, LONG_MAX),
    _Key("remote.storage.enable", "remote_storage_enable", "bool", "false"),
    _Key("remote.log.copy.disable", "remote_log_copy_disable", "bool", "false"),
    _Key("remote.log.delete.on.disable", "remote_log_delete_on_disable", "bool", "false"),
    _Key("cleanup.policy", "cleanup_policy", "list", DELETE, choices=(DELETE, COMPACT)),
    _Key("max.message.bytes", "max_message_bytes", "int", "1048588", 0, INT_MAX),
    _Key(
        "message.timestamp.type",
        "message_timestamp_type",
        "enum",
        CREATE_TIME,
        choices=(CREATE_TIME, LOG_APPEND_TIME),
    ),
    _Key(
        "message.timestamp.before.max.ms",
        "message_timestamp_before_max_ms",
        "int",
        str(LONG_MAX),
        0,
        LONG_MAX,
    ),
    _Key(
        "message.timestamp.after.max.ms",
        "message_timestamp_after_max_ms",
        "int",
        str(TIMESTAMP_AFTER_MAX_MS_DEFAULT),
        0,
        LONG_MAX,
    ),
    _Key("min.insync.replicas", "min_insync_replicas", "int", "1", 1, INT_MAX),
    _Key("file.delete.delay.ms", "file_delete_delay_ms", "int", "60000", 0, LONG_MAX),
    _Key("compression.type", "compression_type", "enum", "producer", choices=COMPRESSION_TYPES),
    _Key("compression.gzip.level", "compression_gzip_level", "int", str(_LEVELS[GZIP]), -1, 9),
    _Key("compression.lz4.level", "compression_lz4_level", "int", str(_LEVELS[LZ4]), 1, 17),
    _Key(
        "compression.zstd.level", "compression_zstd_level", "int", str(_LEVELS[ZSTD]), -131072, 22
    ),
    _Key("delete.retention.ms", "delete_retention_ms", "int", "86400000", 0, LONG_MAX),
    _Key("min.compaction.lag.ms", "min_compaction_lag_ms", "int", "0", 0, LONG_MAX),
    _Key("max.compaction.lag.ms", "max_compaction_lag_ms", "int", str(LONG_MAX), 1, LONG_MAX),
    _Key("min.cleanable.dirty.ratio", "min_cleanable_dirty_ratio", "float", "0.5", 0.0, 1.0),
    _Key("unclean.leader.election.enable", "unclean_leader_election_enable", "bool", "false"),
    _Key("preallocate", "preallocate", "bool", "false"),
    _Key("leader.replication.throttled.replicas", "leader_throttled_replicas", "replicas", ""),
    _Key("follower.replication.throttled.replicas", "follower_throttled_replicas", "replicas", ""),
)
_BY_NAME: Final = {k.name: k for k in _KEYS}
# the integer configs Kafka's LogConfig declares INT (range of a Java int); the others are LONG
_INT_CONFIGS: Final = frozenset(
    {
        "segment.bytes",
        "segment.index.bytes",
        "index.interval.bytes",
        "max.message.bytes",
        "min.insync.replicas",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
    }
)
_KAFKA_TYPES: Final = {
    "bool": "BOOLEAN",
    "enum": "STRING",
    "list": "LIST",
    "replicas": "LIST",
    "float": "DOUBLE",
}
_REPLICA: Final = re.compile(r"[0-9]+:[0-9]+", re.ASCII)  # partition:broker

DEFAULTS: Final[dict[str, str]] = {k.name: k.default for k in _KEYS}


def config_type(name: str) -> str | None:
    """Kafka's ``ConfigDef.Type`` name of topic config ``name`` (None for an unknown name)."""
    key = _BY_NAME.get(name)
    if key is None:
        return None
    if key.kind == "int":
        return "INT" if name in _INT_CONFIGS else "LONG"
    return _KAFKA_TYPES[key.kind]


def validate_turning_off_remote_storage_with_delete(
    new: LogConfig, was_remote_log_enabled: bool
) -> None:
    """Kafka's ``LogConfig.validateTurningOffRemoteStorageWithDelete`` (KIP-950): a tiered
    topic's ``remote.storage.enable`` may go to false only together with
    ``remote.log.delete.on.disable=true``, which deletes its remote segments and raises its log
    start offset to the local log start (cold/uploader.py). Without it the bucket's data would
    silently become unreadable (the log start offset follows the local segments once remote
    storage is off), so the change is refused (INVALID_CONFIG) with Kafka's message."""
    off = was_remote_log_enabled and not new.remote_storage_enable
    if off and not new.remote_log_delete_on_disable:
        raise InvalidConfigError(
            "It is invalid to disable remote storage without deleting remote data. If you "
            "want to keep the remote data and turn to read only, please set "
            "`remote.storage.enable=true,remote.log.copy.disable=true`. If you want to "
            "disable remote storage and delete all remote data, please set "
            "`remote.storage.enable=false,remote.log.delete.on.disable=true`."
        )


def _asks_for_remote_storage(overrides: Mapping[str, str]) -> bool:
    """Whether a topic's own overrides set ``remote.storage.enable=true``."""
    return str(overrides.get("remote.storage.enable", "")).strip().lower() == "true"


def validate_no_remote_storage_for_compacted_topic(
    overrides: Mapping[str, str], config: LogConfig
) -> None:
    """Kafka's ``validateNoRemoteStorageForCompactedTopic``: a topic whose own overrides set
    ``remote.storage.enable=true`` may not compact (from its overrides or the broker default);
    it would silently never be tiered. A broker-wide default enabling remote storage still
    leaves compacted topics untiered (broker/remote_tier.py), as before."""
    if _asks_for_remote_storage(overrides) and config.compact:
        raise InvalidConfigError("Remote log storage is unsupported for the compacted topics")


def validate_tiered_topic_stays_uncompacted(new: LogConfig, was_tiered: bool) -> None:
    """A topic tiered through the broker default of ``remote.storage.enable`` (no override of
    its own, so :func:`validate_no_remote_storage_for_compacted_topic` does not see it) may not
    turn to compaction either: its uploader would go on copying compacted segments, or its
    remote data would be left behind. Kafka has no broker default for the setting; its answer to
    a tiered topic turning compacted is this error."""
    if was_tiered and new.remote_storage_enable and new.compact:
        raise InvalidConfigError("Remote log storage is unsupported for the compacted topics")


def validate_local_retention(config: LogConfig, *, unbounded_ok: bool = False) -> None:
    """Kafka's ``validateRemoteStorageRetentionSize`` / ``validateRemoteStorageRetentionTime``
    (INVALID_CONFIG with Kafka's message): while ``retention.ms`` (``retention.bytes``) is
    finite, ``local.retention.ms`` (``.bytes``) may not exceed it, nor be -1 (local copies kept
    forever, past the topic's own retention, on a disk tiering was meant to bound). Kafka checks
    it for a topic with ``remote.storage.enable=true`` (LogConfig's own check, with
    ``unbounded_ok``, so a topic stored before the -1 rule still opens; the admin paths apply
    all of it) and for the broker defaults when the broker has a cold tier; an untiered topic's
    local retention is never read, so it is not checked."""
    for kind in ("ms", "bytes"):
        total = getattr(config, f"retention_{kind}")
        local = getattr(config, f"local_retention_{kind}")
        if total < 0 or local == -2:
            continue
        if local == -1 and not unbounded_ok:
            reason = f"Value must not be -1 as retention.{kind} value is set as {total}."
        elif local > total:
            reason = f"Value must not be more than retention.{kind} property value: {total}"
        else:
            continue
        raise InvalidConfigError(
            f"Invalid value {local} for configuration local.retention.{kind}: {reason}"
        )


def validate_remote_storage_only_if_system_enabled(
    overrides: Mapping[str, str], system_enabled: bool
) -> None:
    """Kafka's ``validateRemoteStorageOnlyIfSystemEnabled``: a topic may not ask for
    ``remote.storage.enable=true`` from a broker with no cold tier
    (``remote.log.storage.system.enable=false`` or no cold URL); it would never be tiered and
    local retention would delete what the user meant to keep."""
    if _asks_for_remote_storage(overrides) and not system_enabled:
        raise InvalidConfigError(
            "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage."
        )


def invalid_value(name: str, value: object, reason: str) -> Exception:
    """INVALID_CONFIG worded as Kafka's ``ConfigException(name, value, reason)``:
    ``Invalid value <value> for configuration <name>: <reason>``."""
    return InvalidConfigError(f"Invalid value {value} for configuration {name}: {reason}")


def _number(x: float) -> str:
    """A bound as Kafka prints it: a whole number without a fraction (``between(0, 1)``)."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _gzip_level(value: object) -> Exception:
    """Kafka's ``GzipCompression.LevelValidator`` refusal (-1, or 1 to 9)."""
    return invalid_value(
        "compression.gzip.level", value, "Value must be between 1 and 9 or equal to -1"
    )


def _parse(key: _Key, raw: str) -> Any:
    """One value in Kafka's string form; the refusals are worded as Kafka's ``ConfigDef``
    words them (``parseType``, then the key's validator): the raw value for a value that
    does not parse as the key's type, the parsed one for a validator's refusal."""
    text = raw.strip()
    if key.kind == "bool":
        if text.lower() not in ("true", "false"):
            raise invalid_value(key.name, raw, "Expected value to be either true or false")
        return text.lower() == "true"
    if key.kind == "enum":
        if text not in key.choices:
            raise invalid_value(key.name, text, "String must be one of: " + ", ".join(key.choices))
        return text
    if key.kind == "replicas":
        return _parse_replicas(key, raw)
    if key.kind == "list":  # cleanup.policy: empty is legal in Kafka (neither delete nor compact)
        items = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
        for item in items:
            if item not in key.choices:
                allowed = ", ".join(sorted(key.choices))  # Kafka: ValidList.in(compact, delete)
                raise invalid_value(key.name, item, f"String must be one of: {allowed}")
        return items
    kafka_type = config_type(key.name)
    convert: Callable[[str], float] = int if key.kind == "int" else float
    try:
        value = convert(text)
    except ValueError:
        raise invalid_value(key.name, raw, f"Not a number of type {kafka_type}") from None
    if key.kind == "int":
        bits = 31 if kafka_type == "INT" else 63
        if not -(2**bits) <= value < 2**bits:  # Java's parseInt/parseLong refuse it
            raise invalid_value(key.name, raw, f"Not a number of type {kafka_type}")
    low, high = key.low, key.high
    if (low is not None and value < low) or (high is not None and value > high):
        if key.name == "compression.gzip.level":
            raise _gzip_level(value)
        if low is not None and value < low:
            raise invalid_value(key.name, value, f"Value must be at least {_number(low)}")
        raise invalid_value(key.name, value, f"Value must be no more than {_number(high or 0)}")
    return value


def _parse_replicas(key: _Key, raw: str) -> tuple[str, ...]:
    """A throttled replica list: empty, ``*``, or ``partition:broker`` entries (Kafka's
    ``ThrottledReplicaListValidator``, whose refusal shows the parsed list as Java prints a
    list; spaces around entries ignored)."""
    text = raw.strip()
    if not text:
        return ()
    items = tuple(p.strip() for p in text.split(","))
    if items != ("*",) and not all(_REPLICA.fullmatch(p) for p in items):
        raise invalid_value(
            key.name,
            "[" + ", ".join(items) + "]",
            f"{key.name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        )
    return items


def _format(key: _Key, value: Any) -> str:
    if key.kind == "bool":
        return "true" if value else "false"
    if key.kind in ("list", "replicas"):
        return ",".join(value)
    return str(value)


@dataclass(frozen=True)
class LogConfig:
    """Topic configs of one log (immutable; build a new one with ``from_properties(.., base=)``)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    retention_ms: int = 604800000
    retention_bytes: int = -1
    local_retention_ms: int = -2
    local_retention_bytes: int = -2
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    cleanup_policy: tuple[str, ...] = (DELETE,)
    max_message_bytes: int = 1048588
    message_timestamp_type: str = CREATE_TIME
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = TIMESTAMP_AFTER_MAX_MS_DEFAULT
    min_insync_replicas: int = 1
    file_delete_delay_ms: int = 60000
    compression_type: str = "producer"
    compression_gzip_level: int = _LEVELS[GZIP]
    compression_lz4_level: int = _LEVELS[LZ4]
    compression_zstd_level: int = _LEVELS[ZSTD]
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    unclean_leader_election_enable: bool = False
    preallocate: bool = False
    leader_throttled_replicas: tuple[str, ...] = ()
    follower_throttled_replicas: tuple[str, ...] = ()

    @classmethod
    def from_properties(cls, props: Mapping[str, str], base: LogConfig | None = None) -> LogConfig:
        """``base`` (or the defaults) overridden by ``props``; raises InvalidConfigError."""
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            key = _BY_NAME.get(name)
            if key is None:
                raise InvalidConfigError(f"Unknown topic config name: {name}")
            if not isinstance(raw, str):
                raise InvalidConfigError(f"{name}: value must be a string, got {raw!r}")
            changes[key.field] = _parse(key, raw)
        config = dataclasses.replace(base or cls(), **changes)
        config._check()
        return config

    def _check(self) -> None:
        if self.compression_gzip_level == 0:  # Kafka: -1 (the default) or 1-9
            raise _gzip_level(0)
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms:  # Kafka's validateValues
            raise InvalidConfigError(
                f"conflict topic config setting min.compaction.lag.ms "
                f"({self.min_compaction_lag_ms}) > max.compaction.lag.ms "
                f"({self.max_compaction_lag_ms})"
            )
        if self.remote_storage_enable:  # local retention means nothing on an untiered log
            validate_local_retention(self, unbounded_ok=True)

        if self.remote_storage_enable and self.remote_log_copy_disable:
            # Kafka's validateRetentionConfigsWhenRemoteCopyDisabled: local retention is then
            # retention.ms/bytes (hot/retention.py), so a different local value would be ignored
            for kind in ("bytes", "ms"):
                local = getattr(self, f"local_retention_{kind}")
                if local not in (-2, getattr(self, f"retention_{kind}")):
                    raise InvalidConfigError(
                        f"When `remote.log.copy.disable` is set to true, the "
                        f"`local.retention.{kind}` and `retention.{kind}` must be set to the "
                        "identical value because there will be no more logs copied to the "
                        "remote storage."
                    )

    def to_properties(self) -> dict[str, str]:
        return {k.name: _format(k, getattr(self, k.field)) for k in _KEYS}

    def value(self, name: str) -> str:
        """One config as a string by its Kafka name."""
        key = _BY_NAME.get(name)
        if key is None:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
        return _format(key, getattr(self, key.field))

    @property
    def compact(self) -> bool:
        return COMPACT in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return DELETE in self.cleanup_policy

    @property
    def max_segment_ms(self) -> int:
        """Age at which the active segment is rolled: ``segment.ms``, or on a compacted log
        ``max.compaction.lag.ms`` when that is shorter (Kafka's ``maxSegmentMs``, KIP-354), so
        no record waits in the active segment, which is never cleaned, beyond that lag."""
        if self.compact:
            return min(self.segment_ms, self.max_compaction_lag_ms)
        return self.segment_ms

    def random_segment_jitter(self, randrange: Callable[[int], int]) -> int:
        """A segment's roll jitter (Kafka's ``randomSegmentJitter``): 0 without
        ``segment.jitter.ms``, else ``randrange(min(segment.jitter.ms, segment.ms))``, a value
        in [0, that bound) subtracted from the segment's roll age (``max_segment_ms``)."""
        if self.segment_jitter_ms <= 0:
            return 0
        return randrange(min(self.segment_jitter_ms, self.segment_ms))

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    @property
    def remote_copy_enabled(self) -> bool:
        """Rolled segments are uploaded: remote.storage.enable without remote.log.copy.disable
        (Kafka's ``remoteLogEnabledAndRemoteCopyEnabled``)."""
        return self.remote_storage_enable and not self.remote_log_copy_disable

    @property
    def effective_local_retention_ms(self) -> int:
        """local.retention.ms, where -2 means retention.ms."""
        return self.retention_ms if self.local_retention_ms == -2 else self.local_retention_ms

    @property
    def effective_local_retention_bytes(self) -> int:
        """local.retention.bytes, where -2 means retention.bytes."""
        if self.local_retention_bytes == -2:
            return self.retention_bytes
        return self.local_retention_bytes
