"""Offset commits too large, with confluent-kafka (librdkafka) against a `tiered-mq dev` broker
whose ``__consumer_offsets`` segments are 1 KiB (``offsets.topic.segment.bytes``): a commit that
does not fit is INVALID_COMMIT_OFFSET_SIZE and metadata above ``offset.metadata.max.bytes``
(4096) OFFSET_METADATA_TOO_LARGE, both final errors for the client, as Kafka answers them;
nothing is stored, and a commit that fits still is. The too-large commit used to answer
COORDINATOR_NOT_AVAILABLE, which librdkafka retries until its timeout."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

OFFSET_INVALID = -1001  # confluent-kafka: no committed offset


def commit_error(consumer: Consumer, metadata: str) -> int:
    """The error code of a synchronous commit of offset 5 with ``metadata`` (0: committed)."""
    try:
        consumer.commit(offsets=[TopicPartition("t", 0, 5, metadata=metadata)], asynchronous=False)
    except KafkaException as exc:
        code: int = exc.args[0].code()
        return code
    return 0


def test_commits_too_large_are_refused_with_kafkas_errors(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(extra_args=["--config", "offsets.topic.segment.bytes=1024"])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("t", 1, 1)])["t"].result(15)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "g", "enable.auto.commit": False}
    )
    try:
        assert commit_error(consumer, "m" * 2000) == KafkaError.INVALID_COMMIT_OFFSET_SIZE
        assert commit_error(consumer, "m" * 5000) == KafkaError.OFFSET_METADATA_TOO_LARGE
        (nothing,) = consumer.committed([TopicPartition("t", 0)], timeout=10)
        assert nothing.offset == OFFSET_INVALID
        assert commit_error(consumer, "m" * 100) == 0
        (stored,) = consumer.committed([TopicPartition("t", 0)], timeout=10)
        assert (stored.offset, stored.metadata) == (5, "m" * 100)
    finally:
        consumer.close()
