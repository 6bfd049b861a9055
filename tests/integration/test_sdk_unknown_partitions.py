"""The SDK and ``tiered-mq consume`` against a real broker: offsets of a topic or partition
that does not exist, and the console consumer's ``--offset earliest|latest``."""

from __future__ import annotations

import uuid

import pytest

from tests.integration.broker_process import BrokerProcess
from tiered_mq.client import Admin, ClientError
from tiered_mq.topic_partition import TopicPartition

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def admin(shared_broker: BrokerProcess) -> Admin:
    return Admin(bootstrap_servers=shared_broker.bootstrap, request_timeout_s=10)


@pytest.mark.parametrize("spec", ["earliest", "latest", 1_700_000_000_000])
def test_list_offsets_of_an_unknown_topic_is_unknown_topic_or_partition(
    admin: Admin, spec: str | int
) -> None:
    """Kafka's answer (error code 3); librdkafka's local ``_NOENT`` came out before."""
    with pytest.raises(ClientError) as raised:
        admin.list_offsets([TopicPartition(f"nope-{uuid.uuid4().hex[:8]}", 0)], spec)
    assert (raised.value.name, raised.value.code) == ("UNKNOWN_TOPIC_OR_PARTITION", 3)


def test_list_offsets_of_an_unknown_partition_is_unknown_topic_or_partition(admin: Admin) -> None:
    topic = f"two-{uuid.uuid4().hex[:8]}"
    admin.create_topic(topic, partitions=2)
    with pytest.raises(ClientError) as raised:
        admin.list_offsets([TopicPartition(topic, 0), TopicPartition(topic, 5)])
    assert raised.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert f"{topic}-5" in str(raised.value)
