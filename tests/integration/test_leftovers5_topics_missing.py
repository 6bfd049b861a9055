"""``tiered-mq topics describe|delete|alter`` of a topic that does not exist fail as
kafka-topics.sh fails (TopicCommand.ensureTopicExists): exit status 1 and "Topic 'NAME' does not
exist as expected" (here after the command's ``Error: UNKNOWN_TOPIC_OR_PARTITION:``). They used
to show the client library's words ("create partitions of nope: Broker: Unknown topic or
partition"). With ``--if-exists`` they do nothing and exit 0. Run as a user runs the command: a
subprocess against a real broker."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration


def tiered_mq(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tiered_mq", *args, "-b", bootstrap, "--timeout", "10"]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "args", [["describe"], ["delete"], ["alter", "--partitions", "4"]], ids=lambda a: a[0]
)
def test_a_missing_topic_is_kafka_topics_words(
    shared_broker: BrokerProcess, args: list[str]
) -> None:
    missing = f"lo5-nope-{uuid.uuid4().hex[:8]}"
    command, *rest = args
    failed = tiered_mq(shared_broker.bootstrap, "topics", command, missing, *rest)
    assert failed.returncode == 1, failed
    assert failed.stdout == ""
    assert failed.stderr == (
        f"Error: UNKNOWN_TOPIC_OR_PARTITION: Topic '{missing}' does not exist as expected\n"
    )

    quiet = tiered_mq(shared_broker.bootstrap, "topics", command, missing, *rest, "--if-exists")
    assert quiet.returncode == 0, quiet
    assert quiet.stdout == "" and "does not exist" in quiet.stderr


def test_an_existing_topic_is_still_altered(shared_broker: BrokerProcess) -> None:
    """The words change only for a topic that is not there."""
    topic = f"lo5-grow-{uuid.uuid4().hex[:8]}"
    assert tiered_mq(shared_broker.bootstrap, "topics", "create", topic, "-p", "1").returncode == 0
    grown = tiered_mq(shared_broker.bootstrap, "topics", "alter", topic, "--partitions", "3")
    assert grown.returncode == 0 and grown.stdout == f"Topic {topic} now has 3 partitions.\n"
    shrink = tiered_mq(shared_broker.bootstrap, "topics", "alter", topic, "--partitions", "2")
    assert shrink.returncode == 1 and "INVALID_PARTITIONS" in shrink.stderr
    described = tiered_mq(shared_broker.bootstrap, "topics", "describe", topic)
    assert described.returncode == 0 and f"Topic: {topic}  Partitions: 3" in described.stdout
