"""CreateTopics and CreatePartitions refusals worded as Apache Kafka's controller words them
(ReplicationControlManager.createTopics / createPartitions), as the Java Admin and confluent-kafka
show them: "Topic 'x' already exists.", "Topic 'x_y' collides with existing topic: x.y", "The
topic x currently has 4 partition(s); 1 would not be an increase.", "Topic already has 4
partition(s)." and, for a topic that does not exist, UNKNOWN_TOPIC_OR_PARTITION with no message
of its own (each client shows its default text). The broker used to answer in its own words
("topic 'x' already exists", "topic currently has 4 partitions, which is higher than the
requested 1", "topic already has 4 partitions", "topic 'x' does not exist")."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_java import Java, java  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_java_admin_sees_kafkas_words(java: Java, shared_broker: BrokerProcess) -> None:  # noqa: F811
    topic, dotted = _name("words"), f"words.{uuid.uuid4().hex[:8]}"
    missing = _name("words-missing")
    answers = java.admin(
        shared_broker,
        f"create {topic} 4",
        f"create {topic} 1",
        f"create {dotted} 1",
        f"create {dotted.replace('.', '_')} 1",
        f"create-partitions {topic} 1",
        f"create-partitions {topic} 4",
        f"create-partitions {missing} 3",
        f"describe-topics {topic}",
    )
    created, again, _, colliding, shrink, same, unknown, described = answers
    assert "ok" in created, created
    assert (again["error"], again["message"]) == (
        "TopicExistsException",
        f"Topic '{topic}' already exists.",
    )
    assert (colliding["error"], colliding["message"]) == (
        "InvalidTopicException",
        f"Topic '{dotted.replace('.', '_')}' collides with existing topic: {dotted}",
    )
    assert (shrink["error"], shrink["message"]) == (
        "InvalidPartitionsException",
        f"The topic {topic} currently has 4 partition(s); 1 would not be an increase.",
    )
    assert (same["error"], same["message"]) == (
        "InvalidPartitionsException",
        "Topic already has 4 partition(s).",
    )
    # Kafka answers no message: the Java client shows its exception's default text
    assert (unknown["error"], unknown["message"]) == (
        "UnknownTopicOrPartitionException",
        "This server does not host this topic-partition.",
    )
    assert len(described["ok"][topic]["partitions"]) == 4, described


def test_confluent_kafka_sees_kafkas_words(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    topic, missing = _name("words-ck"), _name("words-ck-missing")
    admin.create_topics([NewTopic(topic, 2)])[topic].result(15)

    def refusal(future: object) -> KafkaError:
        with pytest.raises(KafkaException) as refused:
            future.result(15)  # type: ignore[attr-defined]
        error: KafkaError = refused.value.args[0]
        return error

    again = refusal(admin.create_topics([NewTopic(topic, 1)])[topic])
    assert (again.code(), again.str()) == (
        KafkaError.TOPIC_ALREADY_EXISTS,
        f"Topic '{topic}' already exists.",
    )
    shrink = refusal(admin.create_partitions([NewPartitions(topic, 1)])[topic])
    assert (shrink.code(), shrink.str()) == (
        KafkaError.INVALID_PARTITIONS,
        f"The topic {topic} currently has 2 partition(s); 1 would not be an increase.",
    )
    same = refusal(admin.create_partitions([NewPartitions(topic, 2)])[topic])
    assert same.str() == "Topic already has 2 partition(s)."
    unknown = refusal(admin.create_partitions([NewPartitions(missing, 3)])[missing])
    # no message from the broker: librdkafka shows the code's own text
    assert unknown.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert unknown.str() == "Broker: Unknown topic or partition"
