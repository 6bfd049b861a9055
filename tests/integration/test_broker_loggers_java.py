"""Broker log levels changed at runtime with the Java AdminClient (kafka-clients 4.3.0), as
``kafka-configs.sh --entity-type broker-loggers`` does it: ``describeConfigs`` and
``incrementalAlterConfigs`` of ConfigResource.Type.BROKER_LOGGER against ``tiered-mq dev``
(KIP-412). What a user checks: every logger listed with its level, a level set is what the
broker then writes to its log, a level removed follows root again, and Kafka's refusals arrive
as the Java exceptions Kafka's broker would cause. (librdkafka, hence confluent-kafka, has no
BROKER_LOGGER resource type.)"""

from __future__ import annotations

import time

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration

WATCHED = "tiered_mq.broker.dynamic_config"  # logs each dynamic broker config change at INFO


def change_logged(broker: BrokerProcess, value: str) -> bool:
    """Whether the broker's log has ``WATCHED``'s line for ``log.retention.ms`` = ``value``
    (waited for a little: the log is written by another process)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        text = broker.log_path.read_text(errors="replace")
        if any(WATCHED in line and value in line for line in text.splitlines()):
            return True
        time.sleep(0.1)
    return False


def test_broker_logger_levels_with_the_java_admin_client(
    java: Java,  # noqa: F811
    broker: BrokerProcess,
) -> None:
    answers = java.admin(
        broker,
        "describe-configs broker-logger:0",
        f"set-config broker-logger:0 {WATCHED}=ERROR tiered_mq.cold=DEBUG",
        "describe-configs broker-logger:0",
        "set-config broker: log.retention.ms=1000001",
    )
    assert all("ok" in a for a in answers), answers
    listed = answers[0]["ok"]
    assert listed["root"] == {
        "value": "INFO",
        "source": "DYNAMIC_BROKER_LOGGER_CONFIG",
        "sensitive": False,
    }
    assert listed[WATCHED]["value"] == "INFO"
    assert "tiered_mq.broker.partition" in listed
    after = answers[2]["ok"]
    assert after[WATCHED]["value"] == "ERROR"
    assert after["tiered_mq.cold"]["value"] == after["tiered_mq.cold.uploader"]["value"] == "DEBUG"
    assert after["root"]["value"] == "INFO"
    assert not change_logged(broker, "1000001")  # its INFO line is no longer written
    assert f"Updated the log level of {WATCHED} to ERROR" in broker.log_tail(200)

    answers = java.admin(
        broker,
        f"delete-config broker-logger:0 {WATCHED}",
        "describe-configs broker-logger:0",
        "set-config broker: log.retention.ms=1000002",
    )
    assert all("ok" in a for a in answers), answers
    assert answers[1]["ok"][WATCHED]["value"] == "INFO"  # root's again
    assert change_logged(broker, "1000002")

    refused = java.admin(
        broker,
        f"alter-config broker-logger:0 APPEND:{WATCHED}=DEBUG",
        "set-config broker-logger:0 tiered_mq.no.such.module=DEBUG",
        f"set-config broker-logger:0 {WATCHED}=LOUD",
        "delete-config broker-logger:0 root",
        "describe-configs broker-logger:0",
    )
    assert [(a.get("error"), a.get("message")) for a in refused] == [
        (
            "InvalidRequestException",
            "APPEND operation is not allowed for the BROKER_LOGGER resource",
        ),
        ("InvalidConfigurationException", "Logger tiered_mq.no.such.module does not exist!"),
        (
            "InvalidConfigurationException",
            f"Cannot set the log level of {WATCHED} to LOUD as it is not a supported log level. "
            "Valid log levels are DEBUG, ERROR, FATAL, INFO, OFF, TRACE, WARN",
        ),
        ("InvalidRequestException", "Removing the log level of the root logger is not allowed"),
        (None, None),
    ]
    assert refused[4]["ok"][WATCHED]["value"] == "INFO"  # nothing refused was applied
    assert refused[4]["ok"]["root"]["value"] == "INFO"
