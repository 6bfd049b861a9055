"""A fetch that reads from the cold tier is answered once that read is done, whatever its
``min_bytes``, as Kafka's DelayedRemoteFetch: parked for ``min_bytes`` it would read the bucket
(and count the read in the remote fetch metrics) again after ``max_wait_ms``."""

from __future__ import annotations

import time

from tests.unit.broker.test_fetch_cold_fill import PMB, context, request
from tiered_mq.broker.delayed_fetch import FetchPurgatory
from tiered_mq.broker.handlers import fetch
from tiered_mq.broker.metrics import BrokerMetrics


async def test_a_cold_read_below_min_bytes_is_answered_at_once() -> None:
    ctx, remote = context("10.0.0.9")
    ctx.api_version = 11
    ctx.broker.replica_manager.purgatory = FetchPurgatory()
    ctx.broker.replica_manager.partitions = {}
    ctx.broker.metrics = BrokerMetrics()
    req = {
        **request([0]),
        "min_bytes": 4 * PMB,  # more than the partition may return (partition_max_bytes)
        "max_wait_ms": 3000,
        "session_epoch": -1,
    }
    started = time.monotonic()
    response = await fetch.handle(ctx, req)
    assert time.monotonic() - started < 1.5  # not parked for max_wait_ms
    assert len(remote.calls) == 1  # the bucket read once
    records = response["responses"][0]["partitions"][0]["records"]
    assert sum(r.length for r in records) == PMB
    assert ctx.broker.metrics.topics["cold"].bytes_out == PMB
