"""Fetch byte limits: single-partition fill (``fetch.single.partition.max.bytes``), the broker's
``fetch.max.bytes``, and KIP-74 limits for requests of several partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, start_broker
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.handlers import fetch
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

BATCHES = 6
PER_BATCH = 50  # records of ~2 KB: ~100 KB per batch
PMB = 150_000  # partition_max_bytes: one batch fits, two do not


@pytest.fixture(autouse=True)
def backoff_paced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every continuation here counts as coming after a backoff (the gap rule is tested below)."""
    monkeypatch.setattr(fetch, "_continuations", fetch._Continuations(16, paced_gap=0.0))


def test_only_a_client_that_waited_out_a_backoff_is_filled() -> None:
    tp = TopicPartition("t", 0)
    c = fetch._Continuations(2, paced_gap=0.75)
    assert not c.fill("a", tp, 0, now=10.0)  # first fetch at a position
    assert not c.fill("a", tp, 9_000, now=10.01)  # comes straight back: Kafka's exact limit
    assert c.fill("a", tp, 200_000, now=11.02)  # waited out a 1 s backoff: filled
    assert not c.fill("a", tp, 670_000, now=11.03)
    assert not c.fill("a", tp, 670_000, now=12.5)  # a re-fetch of the same offset
    assert not c.fill("a", tp, 0, now=14.0)  # a seek back
    assert not c.fill("b", tp, 5, now=15.0)  # another client: its own history
    c.fill("c", tp, 0, now=15.0)  # a third key evicts the oldest ("a")
    assert not c.fill("a", tp, 100, now=20.0)


def fetch_request(parts: list[tuple[str, int]], max_bytes: int = 1 << 20) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": 0, "fetch_offset": offset, "partition_max_bytes": PMB}
                ],
            }
            for topic, offset in parts
        ],
    }


async def fill_topic(client: Client, topic: str) -> None:
    await create(client, topic)
    for b in range(BATCHES):
        values = [bytes([b, i]) * 1000 for i in range(PER_BATCH)]
        assert (await client.call(PRODUCE, 8, produce_body(topic, batch(values))))["responses"][0][
            "partition_responses"
        ][0]["error_code"] == 0


async def fetched(client: Client, parts: list[tuple[str, int]], **kw: int) -> list[list[int]]:
    """Base offsets of the batches answered, per requested partition."""
    r = await client.call(FETCH, 11, fetch_request(parts, **kw))
    out = []
    for topic in r["responses"]:
        for p in topic["partitions"]:
            assert p["error_code"] == 0
            out.append([h.base_offset for _, h in iter_batches(bytes(p["records"] or b""))])
    return out


async def test_one_partition_read_sequentially_fills_the_response(client: Client) -> None:
    await fill_topic(client, "fill")
    # a first fetch at a position: within partition_max_bytes (first records come at once)
    assert await fetched(client, [("fill", 0)]) == [[0]]
    # the next fetch continues above it after a backoff: hot data fills the response past
    # partition_max_bytes
    assert await fetched(client, [("fill", PER_BATCH)]) == [
        [PER_BATCH * b for b in range(1, BATCHES)]
    ]
    # ... but never past the response's max_bytes
    assert await fetched(client, [("fill", 2 * PER_BATCH)], max_bytes=250_000) == [
        [2 * PER_BATCH, 3 * PER_BATCH]
    ]
    # a seek back starts small again
    assert await fetched(client, [("fill", 0)]) == [[0]]


async def test_several_partitions_keep_partition_max_bytes(client: Client) -> None:
    await fill_topic(client, "a")
    await fill_topic(client, "b")
    assert await fetched(client, [("a", 0), ("b", 0)]) == [[0], [0]]
    assert await fetched(client, [("a", PER_BATCH), ("b", PER_BATCH)]) == [
        [PER_BATCH],
        [PER_BATCH],
    ]


async def test_fill_off_and_broker_fetch_max_bytes(tmp_path: Path) -> None:
    for overrides, expected in (
        ({"fetch.single.partition.max.bytes": "0"}, [[PER_BATCH]]),
        ({"fetch.max.bytes": "250000"}, [[PER_BATCH, 2 * PER_BATCH]]),
    ):
        broker: Broker = await start_broker(
            tmp_path / str(len(overrides) + len(str(expected))), **overrides
        )
        c = await Client.connect(broker.port)
        try:
            await fill_topic(c, "t")
            await fetched(c, [("t", 0)])
            assert await fetched(c, [("t", PER_BATCH)]) == expected
        finally:
            await c.close()
            await broker.close()
