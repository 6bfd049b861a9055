"""BrokerConfig: broker settings vs topic defaults from --config."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig


def test_keys_are_classified(tmp_path: Path) -> None:
    c = BrokerConfig(
        tmp_path,
        overrides={
            "num.partitions": "3",
            "segment.bytes": "1048576",
            "log.retention.ms": "1000",
            "group.initial.rebalance.delay.ms": "0",
        },
    )
    assert c.get_int("num.partitions") == 3
    assert not c.is_default("num.partitions")
    assert c.is_default("auto.create.topics.enable")
    assert c.get_bool("auto.create.topics.enable") is True
    assert c.topic_defaults == {"segment.bytes": "1048576", "retention.ms": "1000"}
    assert c.get_int("group.initial.rebalance.delay.ms") == 0
    assert c["log.dirs"] == str(tmp_path)
    assert c.get_int("socket.request.max.bytes") == 104857600


def test_message_max_bytes_is_both_broker_and_topic_default(tmp_path: Path) -> None:
    c = BrokerConfig(tmp_path, overrides={"message.max.bytes": "2000000"})
    assert c.get_int("message.max.bytes") == 2000000
    assert c.topic_defaults["max.message.bytes"] == "2000000"


def test_a_non_integer_setting_names_itself(tmp_path: Path) -> None:
    config = BrokerConfig(tmp_path, overrides={"zookeeper.session.timeout.ms": "18s"})
    with pytest.raises(ValueError, match=r"zookeeper.session.timeout.ms='18s' is not an integer"):
        config.get_int("zookeeper.session.timeout.ms")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("num.partitions", "abc", "num.partitions='abc' is not an integer"),
        ("socket.send.buffer.bytes", "1k", "socket.send.buffer.bytes='1k' is not an integer"),
        (
            "auto.create.topics.enable",
            "yes",
            "auto.create.topics.enable='yes' is not true or false",
        ),
        # security settings that would be ignored: refused rather than silently weaker
        (
            "ssl.cipher.suites",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "ssl.cipher.suites=.* is not supported: TLS listeners use OpenSSL's default",
        ),
        (
            "listener.name.external.ssl.cipher.suites",
            "TLS_AES_256_GCM_SHA384",
            "listener.name.external.ssl.cipher.suites=.* is not supported",
        ),
        (
            "listener.name.sasl.plain.sasl.server.callback.handler.class",
            "com.example.LdapAuth",
            "is not supported: it names a Java class",
        ),
    ],
)
def test_a_broker_is_not_made_with_a_value_its_setting_refuses(
    tmp_path: Path, key: str, value: str, message: str
) -> None:
    config = BrokerConfig(tmp_path, overrides={key: value})
    with pytest.raises(ValueError, match=message):
        Broker(config)


def test_check_values_takes_numbers_booleans_and_free_text(tmp_path: Path) -> None:
    overrides = {
        "num.partitions": "3",
        "socket.send.buffer.bytes": "-1",
        "auto.create.topics.enable": "FALSE",
        "zookeeper.connection.timeout.ms": "",
        "super.users": "User:admin",
        "ssl.cipher.suites": "",  # Kafka's default (null): every suite
    }
    BrokerConfig(tmp_path, overrides=overrides).check_values()


@pytest.mark.parametrize(
    ("overrides", "defaults"),
    [
        ({"log.retention.hours": "168"}, {"retention.ms": "604800000"}),
        ({"log.retention.hours": "1", "log.retention.minutes": "5"}, {"retention.ms": "300000"}),
        ({"log.retention.minutes": "5", "log.retention.hours": "1"}, {"retention.ms": "300000"}),
        ({"log.retention.hours": "1", "log.retention.ms": "7"}, {"retention.ms": "7"}),
        ({"log.retention.hours": "-1"}, {"retention.ms": "-1"}),
        ({"log.roll.hours": "2"}, {"segment.ms": "7200000"}),
    ],
)
def test_kafka_hours_and_minutes_settings_default_topic_ms(
    tmp_path: Path, overrides: dict[str, str], defaults: dict[str, str]
) -> None:
    config = BrokerConfig(tmp_path, overrides=overrides)
    config.check_values()
    assert config.topic_defaults == defaults


def test_hours_that_are_not_a_number_are_refused(tmp_path: Path) -> None:
    config = BrokerConfig(tmp_path, overrides={"log.retention.hours": "1d"})
    with pytest.raises(ValueError, match=r"log.retention.hours='1d' is not an integer"):
        config.check_values()
