"""spark/reproduce.py with ``--partitioning same`` checks its target before Spark starts.

docs/spark.md's example reproduces ``orders`` into ``orders-replay``: a target that does not
exist was auto-created by the producer with the broker's ``num.partitions`` (1), and the job then
died inside a Spark task on librdkafka's ``Unknown partition``. A target with too few partitions
failed the same way, after the other partitions had been produced. Now both end the job with one
line naming the reason, and nothing is created or produced.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import BrokerFactory
from tests.integration.test_spark_jobs import build, load_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


def _args(bucket: Path, bootstrap: str, target: str) -> list[str]:
    return ["--bucket", f"file://{bucket}", "--topic", "orders", "--bootstrap", bootstrap,
            "--target-topic", target, "--master", "local[1]"]  # fmt: skip


def _topic_state(bootstrap: str, topic: str) -> tuple[int, int]:
    """(partitions, records) of ``topic``; (-1, 0) when it does not exist."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check",
                         "allow.auto.create.topics": "false"})  # fmt: skip
    try:
        found = consumer.list_topics(topic=topic, timeout=30).topics[topic]
        if found.error is not None:
            assert found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
            return -1, 0
        records = 0
        for p in found.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            records += high - low
        return len(found.partitions), records
    finally:
        consumer.close()


def test_reproduce_refuses_a_target_with_fewer_partitions(
    tmp_path: Path, broker_factory: BrokerFactory
) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    build(tmp_path / "bucket", partitions=3, per_partition=40)
    broker = broker_factory()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic("orders-small", 2, 1)]).values():
        future.result(30)

    with pytest.raises(SystemExit) as refused:
        load_job("reproduce").main(_args(tmp_path / "bucket", broker.bootstrap, "orders-small"))

    message = str(refused.value.code)
    assert "'orders-small' has 2 partition(s), the source 3" in message
    assert "--partitioning key" in message
    assert _topic_state(broker.bootstrap, "orders-small") == (2, 0)  # nothing produced


def test_reproduce_refuses_a_missing_target_and_creates_nothing(
    tmp_path: Path, broker_factory: BrokerFactory
) -> None:
    build(tmp_path / "bucket", partitions=3, per_partition=40)
    broker = broker_factory()

    with pytest.raises(SystemExit) as refused:
        load_job("reproduce").main(_args(tmp_path / "bucket", broker.bootstrap, "orders-replay"))

    message = str(refused.value.code)
    assert "'orders-replay' does not exist; create it with at least 3 partition(s)" in message
    assert _topic_state(broker.bootstrap, "orders-replay") == (-1, 0)
