"""A cold read's ``min_one``: a fetch's first partition with data gets at least one whole batch
from the bucket (KIP-74); a later partition, ``min_one=False``, gets nothing when its first
batch is larger than what is left of the response, as a local read, and as Kafka's
RemoteLogManager.read (minOneMessage)."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.unit.cold.helpers import fill, local_bytes, open_log, tiered_rlm
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("minone", 0)


async def test_a_later_partition_gets_no_batch_larger_than_its_limit(tmp_path: Path) -> None:
    log = open_log(tmp_path / "minone-0")
    fill(log, 3, batches_per_segment=4, records_per_batch=6)
    store = ThreadedStore(MemoryStore.named(uuid.uuid4().hex), inline=True)
    rlm = await tiered_rlm(store, TP, log, tmp_path / "cache", 1 << 20, 512)
    try:
        first = iter_batches(local_bytes(log, 0))[0][1]
        # the first partition with data: one whole batch, however small the limit
        read = await rlm.read_regions(TP, 0, 1)
        assert read.size == first.size and read.next_offset == first.next_offset
        # a later partition: nothing when the batch is larger than what is left
        for span in (False, True):
            empty = await rlm.read_regions(TP, 0, first.size - 1, span=span, min_one=False)
            assert (empty.regions, empty.size, empty.next_offset) == ([], 0, None)
        # ... and whole batches within the limit when it has room
        exact = await rlm.read_regions(TP, 0, first.size, min_one=False)
        assert exact.size == first.size and exact.next_offset == first.next_offset
        inside = await rlm.read_regions(TP, first.next_offset + 1, 10**6, min_one=False)
        assert inside.size > 0
        data = b"".join(r.read() for r in inside.regions)
        assert data == local_bytes(log, first.next_offset)[: len(data)]
    finally:
        await rlm.close()
        log.close()
