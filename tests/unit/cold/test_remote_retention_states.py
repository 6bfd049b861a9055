"""The manifest state machine of remote deletion, read back from the bucket: retention moves
COPY_FINISHED victims to DELETE_STARTED (log start offset past them) and then drops them;
``cleanup_unfinished`` finishes DELETE_STARTED entries and deletes abandoned COPY_STARTED ones
(not those an upload is working on); every other entry keeps its state and objects."""

from __future__ import annotations

import uuid

from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.manifest_writer import ManifestWriter, load_manifest
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_retention import (
    cleanup_unfinished,
    delete_remote_segments,
    update_segment_states,
)
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)
S = SegmentState


def _segment(base: int, state: SegmentState) -> RemoteSegment:
    return RemoteSegment(
        base_offset=base,
        end_offset=base + 9,
        first_timestamp=base,
        max_timestamp=base + 9,
        size_bytes=100,
        record_count=10,
        leader_epochs=[(0, base)],
        upload_id=f"u{base}",
        uploader_epoch=0,
        objects={"log": f"k{base}.log", "index": f"k{base}.index"},
        crc32c=1,
        state=state,
    )


async def _bucket(states: dict[int, SegmentState]) -> tuple[ThreadedStore, ManifestWriter]:
    store = ThreadedStore(MemoryStore.named(uuid.uuid4().hex), inline=True)
    for base in states:
        for suffix in ("log", "index"):
            await store.put(f"k{base}.{suffix}", b"x")
    writer = ManifestWriter(store, "p", TP, leader_epoch=0)
    await writer.load()

    def add(m: PartitionManifest) -> None:
        for base, state in states.items():
            m.upsert(_segment(base, state))

    await writer.commit(add)
    return store, writer


async def _states(store: ThreadedStore) -> dict[int, tuple[SegmentState, int]]:
    manifest, _ = await load_manifest(store, "p", TP)
    assert manifest is not None
    return {s.base_offset: (s.state, s.state_ms) for s in manifest.segments}


async def _objects(store: ThreadedStore) -> list[str]:
    return sorted(o.key for o in await store.list("k"))


async def test_retention_deletes_its_victims_through_delete_started() -> None:
    store, writer = await _bucket({0: S.COPY_FINISHED, 10: S.COPY_FINISHED, 20: S.COPY_FINISHED})
    seen: dict[str, object] = {}

    async def on_started() -> None:
        seen["states"] = await _states(store)
        manifest, _ = await load_manifest(store, "p", TP)
        assert manifest is not None
        seen["log_start_offset"] = manifest.log_start_offset

    victims = [s for s in writer.manifest.segments if s.base_offset < 20]
    clock = iter(range(1000, 2000)).__next__
    await delete_remote_segments(
        store, writer, victims, clock, RemoteMetrics(), on_started=on_started
    )

    assert seen["states"] == {
        0: (S.DELETE_STARTED, 1000),
        10: (S.DELETE_STARTED, 1000),
        20: (S.COPY_FINISHED, 0),
    }
    assert seen["log_start_offset"] == 20
    assert await _states(store) == {20: (S.COPY_FINISHED, 0)}
    assert await _objects(store) == ["k20.index", "k20.log"]


async def test_cleanup_finishes_deletions_and_deletes_abandoned_copies() -> None:
    store, writer = await _bucket(
        {0: S.DELETE_STARTED, 10: S.COPY_FINISHED, 20: S.COPY_STARTED, 30: S.COPY_STARTED}
    )
    clock = iter(range(1000, 2000)).__next__

    await cleanup_unfinished(store, writer, {"u30"}, clock, RemoteMetrics())

    # u0 was being deleted, u20 abandoned (no upload in flight); u30's upload goes on
    assert await _states(store) == {10: (S.COPY_FINISHED, 0), 30: (S.COPY_STARTED, 0)}
    assert await _objects(store) == ["k10.index", "k10.log", "k30.index", "k30.log"]


async def test_cleanup_with_nothing_unfinished_changes_nothing() -> None:
    store, writer = await _bucket({0: S.COPY_FINISHED, 10: S.COPY_STARTED})
    before = await load_manifest(store, "p", TP)

    await cleanup_unfinished(store, writer, {"u10"}, lambda: 5000, RemoteMetrics())

    assert await load_manifest(store, "p", TP) == before
    assert len(await _objects(store)) == 4


def test_only_entries_in_the_from_state_move() -> None:
    """A mutation applied again after a lost race meets entries already moved, or moved on
    by another writer: those keep their state and time."""
    m = PartitionManifest("orders", 0, 0)
    for base, state in ((0, S.COPY_FINISHED), (10, S.DELETE_STARTED), (20, S.COPY_FINISHED)):
        m.upsert(_segment(base, state))

    update_segment_states(m, {"u0", "u10"}, S.COPY_FINISHED, S.DELETE_STARTED, 7)

    assert [(s.base_offset, s.state, s.state_ms) for s in m.segments] == [
        (0, S.DELETE_STARTED, 7),
        (10, S.DELETE_STARTED, 0),
        (20, S.COPY_FINISHED, 0),
    ]
