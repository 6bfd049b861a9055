import pytest

from tiered_mq.errors import InvalidConfigError
from tiered_mq.hot.log_config import (
    DEFAULTS,
    LogConfig,
    validate_no_remote_storage_for_compacted_topic,
    validate_turning_off_remote_storage_with_delete,
)


def test_defaults_match_kafka() -> None:
    config = LogConfig()
    assert config.segment_bytes == 1 << 30
    assert config.segment_ms == 7 * 24 * 3600 * 1000
    assert config.retention_ms == 7 * 24 * 3600 * 1000
    assert config.retention_bytes == -1
    assert config.index_interval_bytes == 4096
    assert config.segment_index_bytes == 10 * 1024 * 1024
    assert config.max_message_bytes == 1048588
    assert config.flush_messages == 2**63 - 1
    assert not config.remote_storage_enable
    assert config.cleanup_policy == ("delete",)
    assert config.to_properties() == DEFAULTS
    assert LogConfig.from_properties({}) == config


def test_from_properties_parses_every_kind() -> None:
    config = LogConfig.from_properties(
        {
            "segment.bytes": "1048576",
            "remote.storage.enable": "TRUE",
            "cleanup.policy": "compact,delete",
            "message.timestamp.type": "LogAppendTime",
            "min.cleanable.dirty.ratio": "0.25",
            "retention.ms": "-1",
            "local.retention.ms": "1000",
        }
    )
    assert config.segment_bytes == 1 << 20
    assert config.remote_storage_enable
    assert config.compact and config.delete
    assert config.log_append_time
    assert config.min_cleanable_dirty_ratio == 0.25
    assert config.effective_local_retention_ms == 1000
    props = config.to_properties()
    assert props["cleanup.policy"] == "compact,delete"
    assert props["remote.storage.enable"] == "true"
    assert LogConfig.from_properties(props) == config
    assert config.value("segment.bytes") == "1048576"


def test_base_is_overridden_not_reset() -> None:
    base = LogConfig.from_properties({"segment.bytes": "2048"})
    config = LogConfig.from_properties({"retention.bytes": "100"}, base=base)
    assert (config.segment_bytes, config.retention_bytes) == (2048, 100)
    assert LogConfig().effective_local_retention_bytes == -1


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("segment.bytes", "abc"),
        ("segment.bytes", "13"),
        ("segment.bytes", str(2**31)),
        ("retention.ms", "-3"),
        ("remote.storage.enable", "yes"),
        ("cleanup.policy", "archive"),
        ("cleanup.policy", "delete,archive"),
        ("message.timestamp.type", "createtime"),
        ("min.cleanable.dirty.ratio", "1.5"),
        ("no.such.config", "1"),
    ],
)
def test_bad_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        LogConfig.from_properties({key: value})


def test_local_retention_cannot_exceed_total() -> None:
    """On a tiered topic only, as Kafka (an untiered log never reads local retention)."""
    tiered = {"remote.storage.enable": "true"}
    with pytest.raises(InvalidConfigError, match=r"local\.retention\.ms"):
        LogConfig.from_properties({**tiered, "retention.ms": "1000", "local.retention.ms": "2000"})
    with pytest.raises(InvalidConfigError, match=r"local\.retention\.bytes"):
        LogConfig.from_properties(
            {**tiered, "retention.bytes": "10", "local.retention.bytes": "20"}
        )
    untiered = LogConfig.from_properties({"retention.ms": "1000", "local.retention.ms": "2000"})
    assert untiered.local_retention_ms == 2000
    with pytest.raises(InvalidConfigError, match="Unknown topic config name: nope"):
        LogConfig().value("nope")


def test_min_compaction_lag_cannot_exceed_max() -> None:
    """Kafka's LogConfig.validateValues (INVALID_CONFIG); it used to be accepted."""
    with pytest.raises(InvalidConfigError, match=r"min\.compaction\.lag\.ms \(100\) > max"):
        LogConfig.from_properties({"min.compaction.lag.ms": "100", "max.compaction.lag.ms": "10"})
    equal = {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "10"}
    assert LogConfig.from_properties(equal).max_compaction_lag_ms == 10


def test_a_list_keeps_the_order_it_was_given() -> None:
    """Kafka describes ``cleanup.policy=delete,compact`` as given (and APPEND adds at the end);
    it used to come back sorted, ``compact,delete``."""
    config = LogConfig.from_properties({"cleanup.policy": "delete, compact,delete"})
    assert config.value("cleanup.policy") == "delete,compact"
    assert config.compact and config.delete


def test_compression_levels_take_kafkas_ranges() -> None:
    config = LogConfig.from_properties({})
    assert (
        config.compression_gzip_level,
        config.compression_lz4_level,
        config.compression_zstd_level,
    ) == (-1, 9, 3)
    ok = {"compression.gzip.level": "9", "compression.lz4.level": "17"}
    assert (
        LogConfig.from_properties({**ok, "compression.zstd.level": "-5"}).compression_zstd_level
        == -5
    )
    for name, bad in (
        ("compression.gzip.level", "0"),
        ("compression.gzip.level", "10"),
        ("compression.lz4.level", "0"),
        ("compression.lz4.level", "18"),
        ("compression.zstd.level", "23"),
    ):
        with pytest.raises(InvalidConfigError, match=name):
            LogConfig.from_properties({name: bad})


def test_turning_remote_storage_off_needs_delete_on_disable() -> None:
    off = LogConfig.from_properties({"remote.storage.enable": "false"})
    with pytest.raises(InvalidConfigError, match=r"remote\.log\.delete\.on\.disable=true"):
        validate_turning_off_remote_storage_with_delete(off, was_remote_log_enabled=True)
    validate_turning_off_remote_storage_with_delete(off, was_remote_log_enabled=False)
    deleting = LogConfig.from_properties({"remote.log.delete.on.disable": "true"})
    validate_turning_off_remote_storage_with_delete(deleting, was_remote_log_enabled=True)


def test_remote_log_copy_disable_needs_the_same_local_retention() -> None:
    read_only = {"remote.storage.enable": "true", "remote.log.copy.disable": "true"}
    for kind in ("ms", "bytes"):
        with pytest.raises(InvalidConfigError, match=f"`local.retention.{kind}` and"):
            LogConfig.from_properties({**read_only, f"local.retention.{kind}": "1000"})
        same = {f"retention.{kind}": "1000", f"local.retention.{kind}": "1000"}
        assert not LogConfig.from_properties({**read_only, **same}).remote_copy_enabled
    assert LogConfig.from_properties(
        {"remote.log.copy.disable": "true", "local.retention.ms": "1000"}
    ).remote_log_copy_disable  # not tiered: nothing to check


def test_only_a_topics_own_remote_storage_enable_is_refused_with_compaction() -> None:
    compacted = {"cleanup.policy": "compact"}
    by_default = LogConfig.from_properties({"remote.storage.enable": "true", **compacted})
    validate_no_remote_storage_for_compacted_topic(compacted, by_default)  # left untiered
    asked = {"remote.storage.enable": "true", **compacted}
    with pytest.raises(InvalidConfigError, match="unsupported for the compacted topics"):
        validate_no_remote_storage_for_compacted_topic(asked, by_default)
