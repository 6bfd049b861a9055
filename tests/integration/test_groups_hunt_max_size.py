"""``group.max.size`` with confluent-kafka consumers: with the limit at 2, a third consumer of
the group is refused GROUP_MAX_SIZE_REACHED (librdkafka reports it as a consumer error) and
the two members share every partition; the setting shows in DescribeConfigs."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, ConfigResource

from tests.integration.conftest import BrokerFactory
from tests.integration.test_groups_confluent import create_topic, group_consumer, owned

pytestmark = pytest.mark.integration


def test_a_consumer_beyond_group_max_size_is_refused(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(extra_args=["--config", "group.max.size=2"])
    create_topic(broker.bootstrap, "capped", 4)
    consumers: list[Consumer] = []
    try:
        errors: list[list[str]] = []
        for _ in range(3):
            consumer = group_consumer(broker.bootstrap, "capped-group")
            consumer.subscribe(["capped"])
            consumers.append(consumer)
            errors.append([])
        deadline = time.monotonic() + 20
        while not (any(errors) and sum(len(owned(c)) for c in consumers) == 4):
            assert time.monotonic() < deadline, f"no refusal or no full assignment: {errors}"
            for consumer, seen in zip(consumers, errors, strict=True):
                msg = consumer.poll(0.05)
                if msg is not None and msg.error() is not None:
                    seen.append(msg.error().name())
        refused = [i for i, seen in enumerate(errors) if "GROUP_MAX_SIZE_REACHED" in seen]
        assert len(refused) == 1
        assert not owned(consumers[refused[0]])
        members = [owned(c) for i, c in enumerate(consumers) if i not in refused]
        assert all(members) and set().union(*members) == {0, 1, 2, 3}
    finally:
        for consumer in consumers:
            consumer.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.BROKER, "0")
    described = admin.describe_configs([resource])[resource].result(15)
    assert described["group.max.size"].value == "2"
