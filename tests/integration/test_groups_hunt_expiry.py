"""Offset expiration of a live consumer group against a `tiered-mq dev` broker, over the wire:
while the group is Stable, an offset of a topic no member subscribes to expires (here at its
OffsetCommit v2 retention), one of a subscribed topic stays, as in Kafka."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

import pytest

from tests.integration.broker_process import exchange, request
from tests.integration.conftest import BrokerFactory
from tests.integration.test_groups_confluent import create_topic

pytestmark = pytest.mark.integration

JOIN, SYNC, HEARTBEAT, COMMIT, FETCH = 11, 14, 12, 8, 9
MEMBER_ID_REQUIRED = 79


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0 naming ``topics`` (null user data)."""
    out = struct.pack(">hi", 0, len(topics))
    for name in topics:
        out += struct.pack(">h", len(name)) + name.encode()
    return out + struct.pack(">i", -1)


def join_and_sync(sock: socket.socket, group: str, topics: tuple[str, ...]) -> tuple[str, int]:
    """Join ``group`` as its only member subscribing to ``topics``; (member id, generation)."""
    member_id = ""
    while True:
        body = {
            "group_id": group,
            "session_timeout_ms": 6000,
            "rebalance_timeout_ms": 3000,
            "member_id": member_id,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription(*topics)}],
        }
        joined = exchange(sock, JOIN, 5, body)
        member_id = joined["member_id"]
        if joined["error_code"] != MEMBER_ID_REQUIRED:
            break
    assert joined["error_code"] == 0
    generation: int = joined["generation_id"]
    sync = {"group_id": group, "generation_id": generation, "member_id": member_id}
    assert (
        exchange(sock, SYNC, 3, {**sync, "group_instance_id": None, "assignments": []})[
            "error_code"
        ]
        == 0
    )
    return member_id, generation


def committed(port: int, group: str) -> dict[str, int]:
    answer = request(port, FETCH, 2, {"group_id": group, "topics": None})
    return {
        f"{t['name']}-{p['partition_index']}": p["committed_offset"]
        for t in answer["topics"]
        for p in t["partitions"]
    }


def test_unsubscribed_topic_offset_expires_while_the_group_is_stable(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(extra_args=["--config", "offsets.retention.check.interval.ms=200"])
    for topic in ("read", "dropped"):
        create_topic(broker.bootstrap, topic, 1)
    with socket.create_connection(("127.0.0.1", broker.port), timeout=30) as sock:
        member_id, generation = join_and_sync(sock, "live", ("read",))
        member = {"group_id": "live", "generation_id_or_member_epoch": generation}
        partitions: list[dict[str, Any]] = [
            {"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}
        ]
        body = {
            **member,
            "member_id": member_id,
            "retention_time_ms": 1000,
            "topics": [{"name": t, "partitions": partitions} for t in ("read", "dropped")],
        }
        answer = exchange(sock, COMMIT, 2, body)
        assert [p["error_code"] for t in answer["topics"] for p in t["partitions"]] == [0, 0]
        assert committed(broker.port, "live") == {"read-0": 7, "dropped-0": 7}
        deadline = time.monotonic() + 10
        while "dropped-0" in committed(broker.port, "live"):
            assert time.monotonic() < deadline, "the unsubscribed topic's offset never expired"
            heartbeat = {"group_id": "live", "generation_id": generation}
            beat = {**heartbeat, "member_id": member_id, "group_instance_id": None}
            assert exchange(sock, HEARTBEAT, 3, beat)["error_code"] == 0
            time.sleep(0.2)
        assert committed(broker.port, "live") == {"read-0": 7}  # the group still reads it
