"""Single-partition fill of cold reads: a sequential one-partition fetch below the local log
start offset reads past ``partition_max_bytes``, within the response's ``max_bytes``, the
broker's ``fetch.max.bytes`` and the cold tier's cap (``RemoteLogManager.fetch_max_bytes``)."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import pytest

from tiered_mq.broker.handlers import fetch
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.remote_fetch import RemoteFetches
from tiered_mq.cold.remote_reader import RemoteRead
from tiered_mq.record.file_records import FileRegion
from tiered_mq.topic_partition import TopicPartition

PMB = 1 << 20
CAP = 32 << 20


class FakeRemote:
    """Answers every read with regions of as many bytes as asked (over two chunk files);
    records (offset, max_bytes, span)."""

    fetch_max_bytes = CAP

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, bool]] = []
        self.fetches = RemoteFetches(0.5, RemoteMetrics().fetch_expired)

    async def read_regions(
        self,
        tp: TopicPartition,
        offset: int,
        max_bytes: int,
        *,
        span: bool = False,
        min_one: bool = True,
    ) -> RemoteRead:
        self.calls.append((offset, max_bytes, span))
        half = max_bytes // 2
        regions = [FileRegion(io.BytesIO(), 0, half), FileRegion(io.BytesIO(), 0, max_bytes - half)]
        return RemoteRead(regions, max_bytes, None)  # not batches: no next offset


def context(peer: str, **configs: int) -> tuple[Any, FakeRemote]:
    partition = SimpleNamespace(
        high_watermark=10**6,
        last_stable_offset=10**6,
        log_start_offset=0,
        log_end_offset=10**6,
        log=SimpleNamespace(local_log_start_offset=10**6),  # everything below is cold
    )
    remote = FakeRemote()
    values = {"fetch.max.bytes": 50 << 20, "fetch.single.partition.max.bytes": 50 << 20}
    values.update(configs)
    broker = SimpleNamespace(
        replica_manager=SimpleNamespace(get_partition=lambda tp: partition),
        remote_log_manager=remote,
        config=SimpleNamespace(get_int=lambda key: values[key]),
    )
    allow_all = lambda *_: True  # noqa: E731 - no authorizer
    ctx = SimpleNamespace(broker=broker, client_host=peer, authorize=allow_all, client_closed=None)
    return ctx, remote


@pytest.fixture(autouse=True)
def backoff_paced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every continuation here counts as coming after a backoff (test_fetch_fill tests the gap)."""
    monkeypatch.setattr(fetch, "_continuations", fetch._Continuations(16, paced_gap=0.0))


def request(offsets: list[int], max_bytes: int = 40 << 20) -> dict[str, Any]:
    return {
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [
            {
                "topic": "cold",
                "partitions": [
                    {"partition": p, "fetch_offset": o, "partition_max_bytes": PMB}
                    for p, o in enumerate(offsets)
                ],
            }
        ],
    }


async def sizes(ctx: Any, offsets: list[int], **kw: int) -> list[int]:
    req = request(offsets, **kw)
    responses, total, errored = await fetch._read_all(ctx, req, fetch._fill(ctx, req, 0.0))
    assert not errored
    out = [sum(c.length for c in p["records"]) for p in responses[0]["partitions"]]
    assert sum(out) == total
    return out


async def test_sequential_cold_fetch_fills_up_to_the_cap() -> None:
    ctx, remote = context("10.0.0.1")
    assert await sizes(ctx, [0]) == [PMB]  # first fetch at a position: partition_max_bytes
    assert await sizes(ctx, [100]) == [CAP]  # continues above it: more than PMB, the cap
    assert await sizes(ctx, [200], max_bytes=3 << 20) == [3 << 20]  # never past max_bytes
    assert await sizes(ctx, [0]) == [PMB]  # a seek back starts small again
    assert [span for _, _, span in remote.calls] == [False, True, True, False]


async def test_cold_fill_respects_broker_limits_and_several_partitions() -> None:
    ctx, remote = context("10.0.0.2", **{"fetch.max.bytes": 5 << 20})
    await sizes(ctx, [0])
    assert await sizes(ctx, [100]) == [5 << 20]  # the broker's fetch.max.bytes
    ctx, remote = context("10.0.0.3", **{"fetch.single.partition.max.bytes": 0})
    await sizes(ctx, [0])
    assert await sizes(ctx, [100]) == [PMB]  # fill off
    ctx, remote = context("10.0.0.4")
    await sizes(ctx, [0, 0])
    assert await sizes(ctx, [100, 100]) == [PMB, PMB]  # two partitions share the response
    assert not any(span for _, _, span in remote.calls)
