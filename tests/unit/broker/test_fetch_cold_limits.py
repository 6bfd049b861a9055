"""Byte limits of a Fetch over cold partitions: only the first partition with data reads at
least one batch from the bucket (KIP-74, ``min_one``); a later one whose first batch does not
fit what is left gets no records, and, read_committed, no lookup of the bucket's aborted
transactions (which would read every ``.txnindex`` from its offset to the last stable
offset for an empty answer)."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from tiered_mq.broker.handlers import fetch
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.remote_fetch import RemoteFetches
from tiered_mq.cold.remote_reader import RemoteRead
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.record.file_records import FileRegion
from tiered_mq.topic_partition import TopicPartition

BATCH = 60_000  # every cold batch of the fake bucket
LIMIT = 100_000  # the request's max_bytes and partition_max_bytes


class OneBatchRemote:
    """A bucket whose batches are all BATCH bytes: a read returns as many whole batches as fit
    ``max_bytes``, at least one unless ``min_one=False``."""

    fetch_max_bytes = 64 << 20

    def __init__(self) -> None:
        self.fetches = RemoteFetches(0.5, RemoteMetrics().fetch_expired)
        self.reads: list[tuple[int, int, bool]] = []  # (partition, max_bytes, min_one)
        self.aborted_lookups: list[tuple[int, int, int]] = []

    async def read_regions(
        self,
        tp: TopicPartition,
        offset: int,
        max_bytes: int,
        *,
        span: bool = False,
        min_one: bool = True,
    ) -> RemoteRead:
        self.reads.append((tp.partition, max_bytes, min_one))
        count = max(max_bytes // BATCH, 1 if min_one else 0)
        regions = [FileRegion(io.BytesIO(), 0, BATCH) for _ in range(count)]
        return RemoteRead(regions, count * BATCH, offset + count if count else None)

    async def aborted_transactions(
        self, tp: TopicPartition, start: int, end: int
    ) -> list[AbortedTxn]:
        self.aborted_lookups.append((tp.partition, start, end))
        return []


def context() -> tuple[Any, OneBatchRemote]:
    partition = SimpleNamespace(
        high_watermark=10**6,
        last_stable_offset=10**6,
        log_start_offset=0,
        log_end_offset=10**6,
        log=SimpleNamespace(local_log_start_offset=10**6),  # everything below is cold
        aborted_transactions=lambda start, end: [],
    )
    remote = OneBatchRemote()
    values = {"fetch.max.bytes": 50 << 20, "fetch.single.partition.max.bytes": 0}
    broker = SimpleNamespace(
        replica_manager=SimpleNamespace(get_partition=lambda tp: partition),
        remote_log_manager=remote,
        config=SimpleNamespace(get_int=lambda key: values[key]),
    )
    allow_all = lambda *_: True  # noqa: E731 - no authorizer
    ctx = SimpleNamespace(
        broker=broker, client_host="10.0.0.9", authorize=allow_all, client_closed=None
    )
    return ctx, remote


def request(partitions: int, isolation_level: int) -> dict[str, Any]:
    return {
        "max_bytes": LIMIT,
        "isolation_level": isolation_level,
        "topics": [
            {
                "topic": "cold",
                "partitions": [
                    {"partition": p, "fetch_offset": 0, "partition_max_bytes": LIMIT}
                    for p in range(partitions)
                ],
            }
        ],
    }


async def test_later_cold_partitions_keep_to_what_is_left_of_max_bytes() -> None:
    for isolation_level in (0, 1):
        ctx, remote = context()
        responses, total, errored = await fetch._read_all(ctx, request(3, isolation_level))
        assert not errored
        sizes = [sum(r.length for r in p["records"]) for p in responses[0]["partitions"]]
        assert sizes == [BATCH, 0, 0] and total == BATCH  # within max_bytes but the first
        # the first partition may pass the limit by one batch; the others have 40 kB left
        left = LIMIT - BATCH
        assert remote.reads == [(0, LIMIT, True), (1, left, False), (2, left, False)]
        if isolation_level == 1:  # only the partition with records lists aborted txns
            assert [p for p, _, _ in remote.aborted_lookups] == [0]
            assert responses[0]["partitions"][1]["aborted_transactions"] == []
