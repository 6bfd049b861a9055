"""DescribeConfigs entries as the SDK's ``ConfigValue`` (broker configs come off the wire)."""

from __future__ import annotations

from typing import Any

from confluent_kafka.admin import ConfigSource

from tiered_mq.client.admin_configs import (
    ConfigSynonym,
    ConfigValue,
    broker_label,
    config_source,
    config_value,
)


def test_a_wire_entry_with_its_synonyms() -> None:
    entry = {
        "name": "log.retention.ms",
        "value": "7200000",
        "read_only": False,
        "config_source": 2,
        "is_sensitive": False,
        "synonyms": [
            {"name": "log.retention.ms", "value": "7200000", "source": 2},
            {"name": "log.retention.hours", "value": "48", "source": 4},
            {"name": "log.retention.hours", "value": "168", "source": 5},
        ],
    }
    assert config_value(entry) == ConfigValue(
        "log.retention.ms",
        "7200000",
        "DYNAMIC_BROKER_CONFIG",
        is_default=False,
        synonyms=(
            ConfigSynonym("log.retention.ms", "7200000", "DYNAMIC_BROKER_CONFIG"),
            ConfigSynonym("log.retention.hours", "48", "STATIC_BROKER_CONFIG"),
            ConfigSynonym("log.retention.hours", "168", "DEFAULT_CONFIG"),
        ),
    )


def entry(name: str, value: str | None, source: int, **more: bool) -> dict[str, Any]:
    return {"name": name, "value": value, "config_source": source, "synonyms": [],
            "read_only": False, "is_sensitive": False, **more}  # fmt: skip


def test_defaults_sensitive_and_unknown_sources() -> None:
    default = config_value(entry("num.io.threads", "8", 5, read_only=True))
    assert default.is_default and default.read_only and default.source == "DEFAULT_CONFIG"
    hidden = config_value(entry("sasl.jaas.config", None, 4, is_sensitive=True))
    assert hidden.sensitive and hidden.value is None and not hidden.is_default
    assert config_value(entry("x", "1", -1)).source == "UNKNOWN_CONFIG"
    assert config_value(entry("x", "1", 8)).source == "GROUP_CONFIG"
    assert config_source(ConfigSource.STATIC_BROKER_CONFIG) == "STATIC_BROKER_CONFIG"


def test_broker_label() -> None:
    assert broker_label(3) == "broker 3"
    assert broker_label(None) == "the broker default"
