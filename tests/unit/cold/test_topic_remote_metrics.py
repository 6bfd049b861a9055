"""Per-topic remote-storage series (``tiered_mq_topic_remote_*``) of a topic deleted while a
remote read of it is in flight: the read, answered by the bucket after the topic's partition
was stopped, counts in the broker-wide totals but brings no series of the topic back (a
series created then would stay for ever, as the per-partition ones once did)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from prometheus_client import CollectorRegistry

from tests.unit.cold.helpers import fill, open_log, tiered_rlm
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("scratch", 0)


class GatedReads(ThreadedStore):
    """A memory store whose ranged reads wait for ``gate`` once ``armed`` (``reading`` is set
    when one waits): a bucket answering at a moment the test chooses."""

    def __init__(self, mem: MemoryStore) -> None:
        super().__init__(mem, inline=True)
        self.armed = False
        self.reading = asyncio.Event()
        self.gate = asyncio.Event()

    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        if self.armed:
            self.reading.set()
            await self.gate.wait()
        return await super().get_range(key, start, end_inclusive)


def samples(registry: CollectorRegistry, topic: str) -> dict[str, float]:
    """The ``tiered_mq_topic_remote_*`` samples of ``topic``, by name."""
    return {
        sample.name: sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name.startswith("tiered_mq_topic_remote_") and sample.labels.get("topic") == topic
    }


def total(registry: CollectorRegistry, name: str) -> float:
    value = registry.get_sample_value(name)
    assert value is not None
    return value


async def test_a_read_ending_after_its_topic_was_deleted_leaves_no_series(
    tmp_path: Path,
) -> None:
    store = GatedReads(MemoryStore.named(uuid.uuid4().hex))
    registry = CollectorRegistry()
    log = open_log(tmp_path / "scratch-0")
    fill(log, 3)
    rlm = await tiered_rlm(store, TP, log, tmp_path / "cache", 1 << 20, 4096, registry=registry)
    try:
        hosted = samples(registry, TP.topic)
        assert hosted["tiered_mq_topic_remote_upload_segments_total"] == 3
        assert hosted["tiered_mq_topic_remote_log_segments"] == 3

        store.armed = True
        read = asyncio.ensure_future(rlm.read(TP, 0, 1 << 20))
        await asyncio.wait_for(store.reading.wait(), 10)  # the read waits for the bucket
        rlm.on_stop(TP)  # the topic is deleted
        assert samples(registry, TP.topic) == {}
        store.gate.set()  # then the bucket answers
        assert await asyncio.wait_for(read, 10)
        assert total(registry, "tiered_mq_remote_fetch_bytes_total") > 0
        assert samples(registry, TP.topic) == {}
    finally:
        await rlm.close()
        log.close()


async def test_reads_count_under_their_topic_while_it_is_hosted(tmp_path: Path) -> None:
    """The series the test above expects gone, while the topic is hosted: the same numbers as
    the broker-wide totals (one topic)."""
    store = GatedReads(MemoryStore.named(uuid.uuid4().hex))
    registry = CollectorRegistry()
    log = open_log(tmp_path / "scratch-0")
    fill(log, 3)
    rlm = await tiered_rlm(store, TP, log, tmp_path / "cache", 1 << 20, 4096, registry=registry)
    try:
        assert await rlm.read(TP, 0, 1 << 20)
        hosted = samples(registry, TP.topic)
        for name in ("fetch_bytes", "fetch_requests", "upload_bytes", "upload_segments"):
            assert hosted[f"tiered_mq_topic_remote_{name}_total"] == total(
                registry, f"tiered_mq_remote_{name}_total"
            )
        assert hosted["tiered_mq_topic_remote_fetch_bytes_total"] > 0
        await rlm.stop_partition(TP)
        assert samples(registry, TP.topic) == {}
    finally:
        await rlm.close()
        log.close()
