"""One admin request of several resources while the bucket hangs (SeaweedFS frozen with
SIGSTOP): the broker waits for the topic.json writes of all its resources together, at most
``topic_manifest_wait_s`` (5 s) in all, as a Kafka broker never waits for remote storage on an
admin change. It waited 5 s per resource, one after another: an IncrementalAlterConfigs of four
tiered topics took 20 s, past the 30 s request timeout of clients with a few more. Covered:
IncrementalAlterConfigs and AlterConfigs (confluent-kafka's deprecated alter_configs) of four
topics, CreatePartitions of four topics, CreateTopics of four tiered topics, and dynamic broker
configs of two BROKER resources (the cluster-wide default and broker 0, in one raw
IncrementalAlterConfigs: confluent-kafka and kafka-python refuse the empty name), each
rewriting every tiered topic's topic.json. Once the bucket answers again every write lands,
the last change of each topic winning."""

from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

from tests.integration.broker_process import request
from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.test_tiered_hung_admin import topic_json
from tests.integration.tiered_support import TieredBroker, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WAIT_S = 5.0  # TOPIC_MANIFEST_WAIT_S
ANSWER_WITHIN_S = WAIT_S + 3.0  # one wait per request, not one per resource (20 s for four)
TOPICS = [f"tiered-{i}" for i in range(4)]
NEW_TOPICS = [f"fresh-{i}" for i in range(4)]


def timed_all(futures: dict[Any, Future[Any]]) -> float:
    """Seconds until every future of one confluent-kafka admin request succeeded."""
    start = time.monotonic()
    for future in futures.values():
        future.result(max(0.1, ANSWER_WITHIN_S + 30 - (time.monotonic() - start)))
    return time.monotonic() - start


def test_a_request_of_many_resources_waits_once(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    with TieredBroker(tmp_path, seaweedfs) as broker:
        for topic in TOPICS:
            broker.create_topic(topic)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        took: dict[str, float] = {}
        with seaweedfs.hung():
            retention = ConfigEntry(
                "retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET
            )
            took["IncrementalAlterConfigs"] = timed_all(
                admin.incremental_alter_configs(
                    [ConfigResource("topic", t, incremental_configs=[retention]) for t in TOPICS]
                )
            )
            replaced = {"remote.storage.enable": "true", "retention.ms": "7200000"}
            took["AlterConfigs"] = timed_all(  # replaces the overrides (deprecated API)
                admin.alter_configs(
                    [ConfigResource("topic", t, set_config=replaced) for t in TOPICS]
                )
            )
            took["CreatePartitions"] = timed_all(
                admin.create_partitions([NewPartitions(t, 2) for t in TOPICS])
            )
            took["CreateTopics"] = timed_all(
                admin.create_topics(
                    [
                        NewTopic(t, 1, 1, config={"remote.storage.enable": "true"})
                        for t in NEW_TOPICS
                    ]
                )
            )
            start = time.monotonic()
            bytes_limit = {
                "name": "log.retention.bytes",
                "config_operation": 0,
                "value": "123456789",
            }
            resources = [
                {"resource_type": 4, "resource_name": name, "configs": [bytes_limit]}
                for name in ("", "0")
            ]
            answer = request(
                broker.process.port, 44, 0, {"resources": resources, "validate_only": False}, 60
            )
            took["broker configs"] = time.monotonic() - start
            assert [r["error_code"] for r in answer["responses"]] == [0, 0], answer
        assert all(t < ANSWER_WITHIN_S for t in took.values()), took

        # the bucket answers again: every write lands, each topic's last change winning
        for topic in TOPICS:
            wait_until(
                lambda topic=topic: (
                    (m := topic_json(broker, topic)) is not None
                    and m.partition_count == 2
                    and m.configs.get("retention.ms") == "7200000"
                    and m.configs.get("retention.bytes") == "123456789"
                ),
                timeout=90,
                what=f"{topic}'s topic.json to follow the changes",
            )
        for topic in NEW_TOPICS:
            wait_until(lambda topic=topic: topic_json(broker, topic), timeout=60, what=topic)
