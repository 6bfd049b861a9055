"""A partition a Fetch refuses before reading it (UNKNOWN_TOPIC_OR_PARTITION,
TOPIC_AUTHORIZATION_FAILED) does not end the long poll of the request's other partitions, as
Kafka's KafkaApis keeps such ``erroneous`` partitions out of the DelayedFetch; a read that
fails (OFFSET_OUT_OF_RANGE) still answers at once (errorReadingData), and so does a fetch of
refused partitions only. Before, any refused partition answered the whole fetch at once
(librdkafka, the Java consumer and kafka-python back off such a partition, so they did not
spin; a raw client's long poll did not wait)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, Client, serving
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.broker.broker import Broker
from tiered_mq.errors import (
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.record.records import decode_batches

WAIT_MS = 1500
DELETE_TOPICS = 20


def _fetch(parts: list[tuple[str, int]]) -> dict[str, Any]:
    """A long poll (WAIT_MS, min_bytes 1) of partition 0 of each (topic, fetch offset)."""
    return {
        "replica_id": -1,
        "max_wait_ms": WAIT_MS,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [{"partition": 0, "fetch_offset": o, "partition_max_bytes": 1 << 20}],
            }
            for topic, o in parts
        ],
    }


async def _timed(client: Client, parts: list[tuple[str, int]]) -> tuple[float, list[Any]]:
    start = time.monotonic()
    r = await client.call(FETCH, 11, _fetch(parts))
    return time.monotonic() - start, [p for t in r["responses"] for p in t["partitions"]]


async def test_an_unknown_partition_does_not_end_the_wait(client: Client) -> None:
    await create(client, "idle")
    elapsed, (idle, gone) = await _timed(client, [("idle", 0), ("gone", 0)])
    assert elapsed >= WAIT_MS / 1000 * 0.8
    assert (idle["error_code"], idle["records"]) == (0, b"")
    assert gone["error_code"] == UnknownTopicOrPartitionError.errno
    elapsed, [gone] = await _timed(client, [("gone", 0)])  # nothing to wait for
    assert elapsed < WAIT_MS / 1000 / 2
    assert gone["error_code"] == UnknownTopicOrPartitionError.errno


async def test_an_append_still_wakes_the_wait(broker: Broker, client: Client) -> None:
    await create(client, "idle")
    fetching = asyncio.ensure_future(_timed(client, [("gone", 0), ("idle", 0)]))
    await asyncio.sleep(0.3)
    other = await Client.connect(broker.port)
    try:
        r = await other.call(PRODUCE, 8, produce_body("idle", batch([b"new"])))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
    finally:
        await other.close()
    elapsed, (gone, idle) = await fetching
    assert elapsed < WAIT_MS / 1000 * 0.8
    assert gone["error_code"] == UnknownTopicOrPartitionError.errno
    assert [r.value for _, rs in decode_batches(idle["records"]) for r in rs] == [b"new"]


async def test_a_failed_read_still_answers_at_once(client: Client) -> None:
    for topic in ("idle", "far"):
        await create(client, topic)
    elapsed, (_, far) = await _timed(client, [("idle", 0), ("far", 7)])
    assert elapsed < WAIT_MS / 1000 / 2
    assert far["error_code"] == OffsetOutOfRangeError.errno


async def test_a_topic_without_read_does_not_end_the_wait(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **{"authorizer.class.name": STANDARD_AUTHORIZER}) as (
        broker,
        client,
    ):
        for topic in ("open", "secret"):
            await broker.topic_registry.create_topic(topic, 1, {})
        authorizer = broker.authorizer
        assert authorizer is not None
        pattern = ResourcePattern(ResourceType.TOPIC, "open", PatternType.LITERAL)
        read = AclBinding(pattern, ANONYMOUS, "*", AclOperation.READ, AclPermissionType.ALLOW)
        assert await authorizer.create([read]) == [None]
        elapsed, (secret, open_) = await _timed(client, [("secret", 0), ("open", 0)])
        assert elapsed >= WAIT_MS / 1000 * 0.8
        assert secret["error_code"] == TopicAuthorizationFailedError.errno
        assert open_["error_code"] == 0
        elapsed, [secret] = await _timed(client, [("secret", 0)])
        assert elapsed < WAIT_MS / 1000 / 2
        assert secret["error_code"] == TopicAuthorizationFailedError.errno


async def test_a_partition_deleted_during_the_wait_ends_it(broker: Broker, client: Client) -> None:
    """Kafka's DelayedFetch completes when a partition it watches is gone."""
    for topic in ("doomed", "idle"):
        await create(client, topic)
    fetching = asyncio.ensure_future(_timed(client, [("doomed", 0), ("idle", 0)]))
    await asyncio.sleep(0.3)
    other = await Client.connect(broker.port)
    try:
        r = await other.call(DELETE_TOPICS, 3, {"topic_names": ["doomed"], "timeout_ms": 5000})
        assert r["responses"][0]["error_code"] == 0
    finally:
        await other.close()
    elapsed, (doomed, idle) = await fetching
    assert elapsed < WAIT_MS / 1000 * 0.8
    assert (doomed["error_code"], idle["error_code"]) == (UnknownTopicOrPartitionError.errno, 0)
