"""The bucket's ``.txnindex`` objects answer read_committed cold fetches: entries overlapping
the range only, markers found in later segments, the scan ending at a complete entry, parsed
objects cached per key."""

from __future__ import annotations

import uuid

from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_txn_index import RemoteTxnIndex
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("txn", 0)

# (base, end) of three segments; the txnindex entries of each (markers within the segment)
SEGMENTS = {
    (0, 99): [AbortedTxn(1, 10, 20, 10), AbortedTxn(2, 30, 40, 30)],
    (100, 199): [AbortedTxn(3, 90, 150, 90)],  # begun in the first segment
    (200, 299): [AbortedTxn(4, 250, 260, 500)],
}


async def bucket(with_index: bool = True) -> tuple[RemoteTxnIndex, MemoryStore]:
    mem = MemoryStore.named(uuid.uuid4().hex)
    store = ThreadedStore(mem, inline=True)
    manifest = PartitionManifest(TP.topic, TP.partition)
    for (base, end), entries in SEGMENTS.items():
        objects: dict[str, str | None] = {"log": f"p/{base}.log"}
        if with_index:
            key = f"p/{base}.{layout.TXN_INDEX}"
            await store.put(key, b"".join(e.encode() for e in entries))
            objects[layout.TXN_INDEX] = key
        seg = RemoteSegment(base, end, 0, 0, 1, 1, [], f"u{base}", 0, objects, 0)
        manifest.upsert(seg.with_state(SegmentState.COPY_FINISHED, 1))

    async def source(tp: TopicPartition) -> PartitionManifest:
        assert tp == TP
        return manifest

    return RemoteTxnIndex(store, source, cache_entries=2), mem


def pids(entries: list[AbortedTxn]) -> list[int]:
    return [e.producer_id for e in entries]


async def test_only_overlapping_entries() -> None:
    index, _ = await bucket()
    assert pids(await index.aborted_transactions(TP, 0, 300)) == [1, 2, 3, 4]
    assert pids(await index.aborted_transactions(TP, 0, 10)) == []
    assert pids(await index.aborted_transactions(TP, 0, 11)) == [1]
    assert pids(await index.aborted_transactions(TP, 21, 30)) == []
    assert pids(await index.aborted_transactions(TP, 35, 95)) == [2, 3]  # 3: marker at 150
    assert pids(await index.aborted_transactions(TP, 151, 250)) == []
    assert pids(await index.aborted_transactions(TP, 255, 256)) == [4]
    assert pids(await index.aborted_transactions(TP, 300, 400)) == []
    assert pids(await index.aborted_transactions(TP, 50, 50)) == []


async def test_scan_stops_at_a_complete_entry() -> None:
    index, mem = await bucket()
    # entry 1's last stable offset (10) >= end (5): no later segment is read
    assert pids(await index.aborted_transactions(TP, 0, 5)) == []
    assert len(index._entries) == 1
    mem.fail_next("get", OSError("down"))
    assert pids(await index.aborted_transactions(TP, 0, 5)) == []  # cached: no store read


async def test_no_index_objects() -> None:
    index, _ = await bucket(with_index=False)
    assert await index.aborted_transactions(TP, 0, 300) == []


async def test_cache_is_bounded() -> None:
    index, _ = await bucket()
    await index.aborted_transactions(TP, 0, 300)
    assert len(index._entries) == 2
