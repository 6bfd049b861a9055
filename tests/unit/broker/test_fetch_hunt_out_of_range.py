"""A fetch offset out of range is answered OFFSET_OUT_OF_RANGE whatever the byte limits, as
Kafka's LocalLog.read checks the offset first: a partition after a response already full, or
with ``partition_max_bytes`` 0, got no error and no records, and a long poll waited on it."""

from __future__ import annotations

import time
from typing import Any

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.errors import OffsetOutOfRangeError


def _fetch(b_max_bytes: int, max_bytes: int, **fields: int) -> dict[str, Any]:
    """Topic a from 0, then topic b from 99 (its log ends at 15)."""
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [
            {
                "topic": t,
                "partitions": [{"partition": 0, "fetch_offset": o, "partition_max_bytes": m}],
            }
            for t, o, m in (("a", 0, 1 << 20), ("b", 99, b_max_bytes))
        ],
        **fields,
    }


async def test_out_of_range_is_answered_past_the_byte_limits(client: Client) -> None:
    for topic in ("a", "b"):
        await create(client, topic)
        for _ in range(3):
            await client.call(PRODUCE, 8, produce_body(topic, batch([b"x" * 100] * 5)))
    for b_max_bytes, max_bytes in ((1 << 20, 100), (0, 1 << 20)):  # response full; b's limit 0
        r = await client.call(FETCH, 11, _fetch(b_max_bytes, max_bytes))
        a, b = (t["partitions"][0] for t in r["responses"])
        assert a["error_code"] == 0 and a["records"]
        assert (b["error_code"], b["high_watermark"]) == (OffsetOutOfRangeError.errno, -1)
    start = time.monotonic()  # an error answers a long poll at once
    r = await client.call(FETCH, 11, _fetch(0, 1 << 20, max_wait_ms=5000, min_bytes=1 << 20))
    assert time.monotonic() - start < 2
    assert r["responses"][1]["partitions"][0]["error_code"] == OffsetOutOfRangeError.errno
