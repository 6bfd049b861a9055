"""A long poll's ``min_bytes`` is met by a backlog as Kafka meets it: a partition that has more
data than its byte limit counts as its whole limit (Kafka slices exactly the limit; whole batches
stop short of it), and ``min_bytes`` is capped at the response's ``max_bytes`` (Kafka's
fetchMinBytes). Both fetches waited the whole ``max_wait_ms`` with megabytes to send."""

from __future__ import annotations

import time
from typing import Any

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.record.batch import iter_batches

MIB = 1 << 20
WAIT_MS = 3000


def _fetch(offset: int, min_bytes: int, max_bytes: int) -> dict[str, Any]:
    partition = {"partition": 0, "fetch_offset": offset, "partition_max_bytes": MIB}
    return {
        "replica_id": -1,
        "max_wait_ms": WAIT_MS,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [{"topic": "t", "partitions": [partition]}],
    }


async def _timed(client: Client, body: dict[str, Any]) -> tuple[float, int]:
    """(seconds the answer took, offset after its last batch)."""
    start = time.monotonic()
    r = await client.call(FETCH, 11, body)
    records = r["responses"][0]["partitions"][0]["records"]
    last = [h.last_offset for _, h in iter_batches(bytes(records))][-1]
    return time.monotonic() - start, last + 1


async def test_a_backlog_meets_min_bytes_at_once(client: Client) -> None:
    await create(client, "t")
    for _ in range(30):  # ~3 MB of ~100 KB batches: no 1 MiB of whole batches ends on 1 MiB
        await client.call(PRODUCE, 8, produce_body("t", batch([b"x" * 1000] * 100)))
    took, offset = await _timed(client, _fetch(0, MIB, MIB))  # a 1 MiB min_bytes, a 1 MiB limit
    assert took < 1.0
    took, offset = await _timed(client, _fetch(offset, 10 * MIB, MIB))  # min above max_bytes
    assert took < 1.0
    # the rest of the log (its last 1 MB) is short of min_bytes: the fetch waits, then answers it
    took, end = await _timed(client, _fetch(offset, MIB, MIB))
    assert took >= WAIT_MS / 1000 - 0.1 and end == 3000


async def test_a_batch_larger_than_a_later_partitions_limit_meets_min_bytes(
    client: Client,
) -> None:
    for topic, values in (("small", [b"x"]), ("t", [b"y" * 1000] * 200)):  # 1 record; 200 KB
        await create(client, topic)
        await client.call(PRODUCE, 8, produce_body(topic, batch(values)))
    body = _fetch(0, 50_000, MIB)
    small = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": MIB}
    body["topics"].insert(0, {"topic": "small", "partitions": [small]})
    body["topics"][1]["partitions"][0]["partition_max_bytes"] = 100_000
    start = time.monotonic()  # Kafka counts t's 200 KB batch up to its 100 KB limit: answered
    r = await client.call(FETCH, 11, body)
    assert time.monotonic() - start < 1.0
    assert [bool(t["partitions"][0]["records"]) for t in r["responses"]] == [True, False]
