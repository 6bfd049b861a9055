"""Static membership and the pending-sync deadline against a `tiered-mq dev` broker.

- two confluent-kafka (librdkafka) consumers with ``group.instance.id``: one restarts within
  ``session.timeout.ms`` and gets its partitions back, while the other sees no revoke or assign
  (Kafka's updateStaticMemberAndRebalance: no rebalance while the group is Stable);
- raw protocol: a leader that keeps heartbeating but never sends SyncGroup is removed after the
  rebalance timeout (Kafka's pending-sync expiry) and the follower's SyncGroup is answered, so
  the group does not stall.
"""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from confluent_kafka import Consumer

from tests.integration.broker_process import BrokerProcess, exchange
from tests.integration.test_groups_confluent import (
    create_topic,
    exact_cover,
    group_consumer,
    owned,
    poll_until,
    produce,
)

pytestmark = pytest.mark.integration

JOIN, HEARTBEAT, SYNC = 11, 12, 14
NONE, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED = 0, 25, 27, 79


def test_static_member_restart_gets_its_partitions_back_without_a_rebalance(
    broker: BrokerProcess, consumers: list[Consumer]
) -> None:
    create_topic(broker.bootstrap, "four", 4)
    produce(broker.bootstrap, "four", 40, 4)
    events: list[tuple[str, list[int]]] = []

    def record(kind: str) -> Any:
        return lambda _c, parts: events.append((kind, sorted(p.partition for p in parts)))

    static = {"session.timeout.ms": 10_000}
    a = group_consumer(broker.bootstrap, "statics", **{"group.instance.id": "i-a"}, **static)
    b = group_consumer(broker.bootstrap, "statics", **{"group.instance.id": "i-b"}, **static)
    consumers += [a, b]
    a.subscribe(["four"])
    b.subscribe(["four"], on_assign=record("assign"), on_revoke=record("revoke"))
    poll_until([a, b], lambda: exact_cover([owned(a), owned(b)], 4), 30)
    before_a, before_b, seen = owned(a), owned(b), len(events)

    a.close()  # a static member does not leave the group when it closes
    a2 = group_consumer(broker.bootstrap, "statics", **{"group.instance.id": "i-a"}, **static)
    consumers[0] = a2
    a2.subscribe(["four"])
    took = poll_until([a2, b], lambda: bool(owned(a2)), 30)
    assert took < 10  # within b's session timeout: nothing waited for a timeout
    _poll_for([a2, b], 2.0)  # time for any rebalance to show
    assert owned(a2) == before_a
    assert owned(b) == before_b
    assert events[seen:] == []  # b saw no revoke and no assign: no rebalance


def _poll_for(consumers: list[Consumer], seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for c in consumers:
            c.poll(0.05)


class _Member:
    """One raw classic-protocol member on its own connection (JoinGroup v5, SyncGroup v3)."""

    def __init__(self, port: int, group: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.group, self.member_id, self.generation = group, "", -1

    def join(self) -> dict[str, Any]:
        while True:
            answer = exchange(
                self.sock,
                JOIN,
                5,
                {
                    "group_id": self.group,
                    "session_timeout_ms": 6000,
                    "rebalance_timeout_ms": 3000,
                    "member_id": self.member_id,
                    "group_instance_id": None,
                    "protocol_type": "consumer",
                    "protocols": [{"name": "range", "metadata": b"m"}],
                },
            )
            self.member_id = answer["member_id"] or self.member_id
            if answer["error_code"] != MEMBER_ID_REQUIRED:
                self.generation = answer["generation_id"]
                return answer

    def sync(self) -> dict[str, Any]:
        body = {
            "group_id": self.group,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": None,
            "assignments": [],
        }
        return exchange(self.sock, SYNC, 3, body)

    def heartbeat(self) -> int:
        body = {
            "group_id": self.group,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": None,
        }
        error: int = exchange(self.sock, HEARTBEAT, 3, body)["error_code"]
        return error

    def close(self) -> None:
        self.sock.close()


def test_leader_that_never_syncs_does_not_stall_the_group(broker: BrokerProcess) -> None:
    one, two = _Member(broker.port, "stall"), _Member(broker.port, "stall")
    with ThreadPoolExecutor(2) as pool:
        try:
            joins = [pool.submit(m.join) for m in (one, two)]
            answers = [j.result(30) for j in joins]
            assert [a["error_code"] for a in answers] == [NONE, NONE]
            leader, follower = (one, two) if answers[0]["leader"] == one.member_id else (two, one)
            parked = pool.submit(follower.sync)
            start = time.monotonic()
            while not parked.done():  # the leader heartbeats but never sends its SyncGroup
                assert time.monotonic() - start < 10, "the follower's SyncGroup was never answered"
                assert leader.heartbeat() == NONE
                time.sleep(0.3)
            assert parked.result()["error_code"] == REBALANCE_IN_PROGRESS
            assert time.monotonic() - start >= 2  # after the rebalance timeout (3 s), not before
            assert leader.heartbeat() == UNKNOWN_MEMBER_ID  # removed from the group
            again = follower.join()  # the only member left: a new generation at once
            assert again["error_code"] == NONE
            assert again["leader"] == follower.member_id
            assert [m["member_id"] for m in again["members"]] == [follower.member_id]
            assert follower.sync()["error_code"] == NONE
        finally:
            one.close()
            two.close()
