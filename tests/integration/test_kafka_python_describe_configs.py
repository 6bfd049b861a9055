"""kafka-python's ``describe_configs`` against ``tiered-mq dev``: a ConfigResource whose configs
dict is empty goes out as an empty ``configuration_keys`` list, which Kafka answers with every
config, as it answers a null one (``ConfigHelper.describeConfigs``). The broker used to answer
it with none."""

from __future__ import annotations

import time

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration


def test_an_empty_configs_dict_lists_every_config(broker: BrokerProcess) -> None:
    topic = f"kp-configs-{time.monotonic_ns()}"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=15000)
    try:
        admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "3600000"})])

        def described(configs: dict[str, None] | None) -> dict[str, str]:
            resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)
            answer = admin.describe_configs([resource], config_filter="all")
            return {k: v["value"] for k, v in answer["topic"][topic].items()}

        every = described(None)
        assert len(every) > 20 and every["retention.ms"] == "3600000"
        assert described({}) == every
        assert described({"retention.ms": None}) == {"retention.ms": "3600000"}
    finally:
        admin.close()
