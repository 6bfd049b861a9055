"""DescribeLogDirs and DescribeCluster with real admin clients: kafka-python 3's
``KafkaAdminClient.describe_log_dirs()`` / ``describe_cluster()`` and confluent-kafka's
``AdminClient.describe_cluster()`` (librdkafka, which builds it on Metadata).

What a user checks: the partition sizes a client reports are the bytes of the .log files on
the broker's disk, a new topic shows up, the volume's total and usable bytes are plausible, and
the cluster description names this broker at the address the client used, with the cluster id
that Metadata reports."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration


def new_topic(bootstrap: str, partitions: int) -> str:
    name = f"dirs-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
    return name


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=b"x" * 50 + str(i).encode(), partition=i % partitions)
    assert producer.flush(15) == 0


def log_bytes_on_disk(data_dir: Path, topic: str, partition: int) -> int:
    return sum(f.stat().st_size for f in (data_dir / f"{topic}-{partition}").glob("*.log"))


def sizes_by_partition(log_dirs: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    return {
        (t["name"], p["partition_index"]): p["partition_size"]
        for d in log_dirs
        for t in d["topics"]
        for p in t["partitions"]
    }


def test_kafka_python_describe_log_dirs_reports_the_bytes_on_disk(broker: BrokerProcess) -> None:
    first = new_topic(broker.bootstrap, 3)
    produce(broker.bootstrap, first, 300, 3)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        (answer,) = admin.describe_log_dirs()
        assert answer["broker"] == 0
        (log_dir,) = answer["log_dirs"]
        assert log_dir["error_code"] == 0
        assert log_dir["log_dir"] == str(broker.data_dir.absolute())
        assert 0 < log_dir["usable_bytes"] <= log_dir["total_bytes"]
        sizes = sizes_by_partition(answer["log_dirs"])
        for p in range(3):
            on_disk = log_bytes_on_disk(broker.data_dir, first, p)
            assert sizes[(first, p)] == on_disk > 100 * 50
        for t in log_dir["topics"]:
            assert all(p["offset_lag"] == 0 and not p["is_future_key"] for p in t["partitions"])

        second = new_topic(broker.bootstrap, 1)
        produce(broker.bootstrap, second, 10, 1)
        (answer,) = admin.describe_log_dirs()
        sizes = sizes_by_partition(answer["log_dirs"])
        assert sizes[(second, 0)] == log_bytes_on_disk(broker.data_dir, second, 0) > 10 * 50
        assert [sizes[(first, p)] for p in range(3)] == [
            log_bytes_on_disk(broker.data_dir, first, p) for p in range(3)
        ]

        # named partitions only; one the broker does not have is left out
        (answer,) = admin.describe_log_dirs({second: [0, 5]})
        assert sizes_by_partition(answer["log_dirs"]) == {(second, 0): sizes[(second, 0)]}
    finally:
        admin.close()


def test_kafka_python_describe_cluster(broker: BrokerProcess) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    metadata = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
    assert cluster["cluster_id"] == metadata.cluster_id and cluster["cluster_id"]
    assert cluster["controller_id"] == metadata.controller_id == 0
    # is_fenced exists only in DescribeCluster v2: kafka-python did not fall back to Metadata
    assert cluster["brokers"] == [
        {"broker_id": 0, "host": "127.0.0.1", "port": broker.port, "rack": None, "is_fenced": False}
    ]
    assert set(cluster["authorized_operations"]) == {
        "CREATE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
    }


def test_describe_cluster_answers_with_the_listener_used(broker_factory: BrokerFactory) -> None:
    """Two listeners, one advertised as localhost: each client hears of the broker at the
    address it connected to. kafka-python asks DescribeCluster; librdkafka's
    ``describe_cluster()`` is built on Metadata, and must agree with it."""
    internal, external = free_port(), free_port()
    args = [
        "--config", f"listeners=INTERNAL://127.0.0.1:{internal},EXTERNAL://127.0.0.1:{external}",
        "--config", f"advertised.listeners=EXTERNAL://localhost:{external}",
        "--config", "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
    ]  # fmt: skip
    broker_factory(port=internal, extra_args=args)
    for host, port in (("127.0.0.1", internal), ("localhost", external)):
        kp_admin = KafkaAdminClient(bootstrap_servers=f"{host}:{port}")
        try:
            described = kp_admin.describe_cluster()
        finally:
            kp_admin.close()
        assert [(b["broker_id"], b["host"], b["port"]) for b in described["brokers"]] == [
            (0, host, port)
        ]
        admin = AdminClient({"bootstrap.servers": f"{host}:{port}"})
        cluster = admin.describe_cluster(request_timeout=10).result()
        assert cluster.cluster_id == described["cluster_id"]
        assert [(n.id, n.host, n.port) for n in cluster.nodes] == [(0, host, port)]
        assert (cluster.controller.id, cluster.controller.port) == (0, port)
