"""Remote reads are counted as Kafka's RemoteFetchRequestsPerSec / RemoteFetchBytesPerSec /
RemoteFetchErrorsPerSec count them: every read, its bytes, the failed ones (an offset the
bucket does not hold is an answer, not a failure)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.unit.cold.helpers import fill, open_log, tiered_rlm
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.errors import OffsetOutOfRangeError
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("counted", 0)


async def test_each_remote_read_is_counted(tmp_path: Path) -> None:
    log = open_log(tmp_path / "counted-0")
    fill(log, 3, batches_per_segment=4, records_per_batch=5)
    rlm = await tiered_rlm(
        ThreadedStore(MemoryStore.named(uuid.uuid4().hex), inline=True),
        TP,
        log,
        tmp_path / "cache",
        1 << 20,
        512,
    )
    registry = rlm.metrics.registry

    def sample(name: str) -> float:
        return registry.get_sample_value(f"tiered_mq_remote_{name}_total") or 0.0

    try:
        sizes = [(await rlm.read_regions(TP, offset, 1 << 20)).size for offset in (0, 7)]
        assert sample("fetch_requests") == 2
        assert sample("fetch_bytes") == sum(sizes) > 0
        with pytest.raises(OffsetOutOfRangeError):
            await rlm.read_regions(TP, log.log_end_offset + 100, 1 << 20)
        assert sample("fetch_requests") == 3
        assert sample("fetch_errors") == 0
    finally:
        await rlm.close()
        log.close()
