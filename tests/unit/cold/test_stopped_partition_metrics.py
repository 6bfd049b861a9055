"""A partition the cold tier stops hosting keeps no labelled series behind, even when its
uploader's pending bucket call completes in the same loop turn as the stop.

In the no-restart leak soak (a scratch topic created and deleted every ~15 s) 4 of 31 deleted
topics each left a partition's ``tiered_mq_remote_copy_lag_*`` and ``_log_*`` series on the
metrics endpoint: the uploader's first manifest read came back just as the topic was deleted,
the uploader published its series after ``on_stop`` had dropped them, and only then did its
stop task cancel it. Series of deleted topics pile up with topic churn."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from prometheus_client import CollectorRegistry

from tests.unit.cold.helpers import Clock, fill, open_log
from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.topic_partition import TopicPartition

PREFIX = "cluster1"
TP = TopicPartition("scratch", 0)
SERIES = (
    "tiered_mq_remote_copy_lag_bytes",
    "tiered_mq_remote_copy_lag_segments",
    "tiered_mq_remote_log_bytes",
    "tiered_mq_remote_log_segments",
)


class GatedStore(ThreadedStore):
    """A memory store whose reads of one key wait for ``gate`` (``reading`` is set once one
    waits): a slow bucket answering at a moment the test chooses."""

    def __init__(self, mem: MemoryStore, key: str) -> None:
        super().__init__(mem, inline=True)
        self.key = key
        self.reading = asyncio.Event()
        self.gate = asyncio.Event()

    async def get(self, key: str) -> tuple[bytes, str]:
        if key == self.key:
            self.reading.set()
            await self.gate.wait()
        return await super().get(key)


def series_of(registry: CollectorRegistry, tp: TopicPartition) -> list[str]:
    labels = {"topic": tp.topic, "partition": str(tp.partition)}
    return [
        sample.name
        for family in registry.collect()
        for sample in family.samples
        if sample.name in SERIES and sample.labels == labels
    ]


async def test_a_partition_stopped_as_its_manifest_read_completes_keeps_no_series(
    tmp_path: Path,
) -> None:
    store = GatedStore(MemoryStore.named(uuid.uuid4().hex), layout.manifest_key(PREFIX, *TP))
    registry = CollectorRegistry()
    rlm = RemoteLogManager(
        store,
        PREFIX,
        tmp_path / "cache",
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        registry=registry,
        clock=Clock(),
    )
    await rlm.start()
    log = open_log(tmp_path / "scratch-0")
    fill(log, 1)
    try:
        rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
        await asyncio.wait_for(store.reading.wait(), 10)  # the first pass reads the manifest
        store.gate.set()  # the bucket answers...
        rlm.on_stop(TP)  # ...in the loop turn in which the topic is deleted
        await rlm.stop_partition(TP)
        await asyncio.sleep(0.05)
        assert series_of(registry, TP) == []
    finally:
        await rlm.close()
        log.close()


async def test_a_partition_still_hosted_publishes_its_series(tmp_path: Path) -> None:
    """The series the test above expects gone are there while the partition is hosted."""
    store = GatedStore(MemoryStore.named(uuid.uuid4().hex), layout.manifest_key(PREFIX, *TP))
    store.gate.set()
    registry = CollectorRegistry()
    rlm = RemoteLogManager(
        store,
        PREFIX,
        tmp_path / "cache",
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        registry=registry,
        clock=Clock(),
    )
    await rlm.start()
    log = open_log(tmp_path / "scratch-0")
    fill(log, 1)
    try:
        rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
        for _ in range(200):
            if len(series_of(registry, TP)) == len(SERIES):
                break
            await asyncio.sleep(0.01)
        assert sorted(series_of(registry, TP)) == sorted(SERIES)
        await rlm.stop_partition(TP)
        assert series_of(registry, TP) == []
    finally:
        await rlm.close()
        log.close()
