"""A leader election by another tool (the partition's state znode written with a higher leader
epoch, as Kafka's controller writes it) reaches the broker as in Kafka: the partition takes the
new epoch, the batches appended after it carry it, and a request still naming the old epoch is
fenced (FENCED_LEADER_EPOCH, shown with a raw ListOffsets).

Real clients keep no leader epoch from a Metadata response below v9 (Java's
``MetadataResponse.hasReliableLeaderEpochs``; librdkafka likewise), and this broker answers
Metadata up to v8: a Java consumer (kafka-clients 4.3.0) and a confluent-kafka one send
``current_leader_epoch`` -1, are never fenced, and go on across the change: each reads every
record once, in order, with the epoch it was written in."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Message
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.integration.broker_process import request
from tests.integration.test_broker_java import Java, Member, java, members  # noqa: F401
from tests.integration.test_broker_zookeeper import produce, zk_broker
from tests.integration.test_broker_zookeeper_other_tools import chroot, zk  # noqa: F401
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (the fixture)
from tiered_mq.coordination import znodes
from tiered_mq.protocol.api_versions import ApiKey

pytestmark = pytest.mark.integration


def wait_for(check: Callable[[], Any], what: str, timeout: float = 15) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return result


def take(consumer: Consumer, n: int, timeout: float = 30) -> list[Message]:
    got: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        m = consumer.poll(0.2)
        if m is not None:
            assert m.error() is None, m.error()
            got.append(m)
    return got


def latest_answer(port: int, current_epoch: int) -> tuple[int, int]:
    """(error code, leader epoch) of ListOffsets latest of ep-0 sent with ``current_epoch``."""
    p = {"partition_index": 0, "timestamp": -1, "current_leader_epoch": current_epoch}
    body = {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "ep", "partitions": [p]}]}
    answer = request(port, ApiKey.LIST_OFFSETS, 5, body)["topics"][0]["partitions"][0]
    return answer["error_code"], answer["leader_epoch"]


def test_consumers_follow_a_leader_epoch_written_by_another_tool(
    tmp_path: Path,
    chroot: str,  # noqa: F811
    zk: KazooClient,  # noqa: F811
    java: Java,  # noqa: F811
    members: list[Member],  # noqa: F811
) -> None:
    with zk_broker(tmp_path / "data", chroot) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("ep", 1, 1)])["ep"].result(15)
        first = [f"a{i}" for i in range(100)]
        produce(broker.bootstrap, "ep", [v.encode() for v in first])

        member = Member.start(java, broker, "ep", "java-epochs", tmp_path / "member.log")
        members.append(member)
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "epochs",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.subscribe(["ep"])
            before = take(consumer, 100)
            assert [m.value() for m in before] == [v.encode() for v in first]
            wait_for(lambda: len(member.values) == 100, "Java to read the first records", 60)

            # another tool's leader election: the state znode with the next leader epoch
            path = znodes.partition_state("ep", 0)
            state = json.loads(zk.get(path)[0])
            assert state["leader_epoch"] == 0
            zk.set(path, json.dumps({**state, "leader_epoch": 1}).encode())
            wait_for(lambda: latest_answer(broker.port, 1) == (0, 1), "the broker to take it")
            assert latest_answer(broker.port, 0) == (74, -1)  # FENCED_LEADER_EPOCH

            second = [f"b{i}" for i in range(100)]
            produce(broker.bootstrap, "ep", [v.encode() for v in second])
            after = take(consumer, 100)
            assert [m.value() for m in after] == [v.encode() for v in second]
            assert [m.offset() for m in before + after] == list(range(200))
            assert [m.leader_epoch() for m in before + after] == [0] * 100 + [1] * 100
            assert take(consumer, 1, timeout=1) == []  # nothing read twice
        finally:
            consumer.close()

        # Java too: no record twice, none lost, each with its batch's epoch
        wait_for(lambda: len(member.values) >= 200, "Java to read the new records", 60)
        time.sleep(1)
        assert member.values == first + second
        with member.lock:
            read = [m for e in member.events for m in e.get("messages", [])]
        assert [m["leader_epoch"] for m in read] == [0] * 100 + [1] * 100
        member.close()
