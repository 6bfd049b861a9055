"""A partition of a topic that is not tiered costs its uploader nothing while idle.

Every partition of a broker with a cold tier has an uploader, tiered or not. It ran a pass
every ``remote.log.manager.task.interval.ms`` (1 s), which does nothing while
``remote.storage.enable=false``: with ~4,400 partitions a broker idled at 15% of a core. Now
such an uploader waits for a config change, which wakes it: turning remote storage on tiers
the topic at once, as before."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tiered_mq.cold.uploader import PartitionUploader
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.records import Record, encode_batch
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("plain", 0)
INTERVAL_MS = 10


async def test_untiered_partitions_wait_for_a_config_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: Counter[TopicPartition] = Counter()
    original = PartitionUploader.run_pass

    async def counted(self: PartitionUploader) -> None:
        passes[self.tp] += 1
        await original(self)

    monkeypatch.setattr(PartitionUploader, "run_pass", counted)
    broker = await start_broker(
        tmp_path / "data",
        cold_url="memory://untiered-idle/prefix",
        **{"remote.log.manager.task.interval.ms": str(INTERVAL_MS)},
    )
    try:
        await broker.topic_registry.create_topic("plain", 1)
        partition = broker.replica_manager.get_partition(TP)
        for _ in range(2):  # a rolled segment to upload once tiered
            now = int(time.time() * 1000)  # not past retention.ms
            records = bytearray(encode_batch([Record(0, now, b"k", b"v")]))
            await partition.append_as_leader(records, iter_batches(records))
            async with partition.lock:
                partition.log.roll()
        await asyncio.sleep(50 * INTERVAL_MS / 1000)
        assert passes[TP] <= 3  # its first pass, and one per roll (wake)

        await broker.topic_registry.set_configs("plain", {"remote.storage.enable": "true"}, False)
        rlm = broker.remote_log_manager
        assert rlm is not None
        for _ in range(500):
            uploader = rlm.uploader(TP)
            if uploader is not None and uploader.manifest.segments:
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the topic was not tiered after remote.storage.enable=true")
    finally:
        await broker.close()
