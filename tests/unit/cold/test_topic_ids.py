"""Topic ids in the bucket: a manifest of another incarnation of the same topic name is never
adopted (writer, uploader, reader, scrub, Spark planner), and a deleted topic's objects are
deleted by topic id in the background, resumed from the journal after a restart."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.cold.helpers import Clock, fill, local_bytes, open_log
from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import (
    PartitionManifest,
    TopicManifest,
    is_foreign,
    parse_partition_manifest,
    parse_topic_manifest,
)
from tiered_mq.cold.manifest_writer import FencedError, ManifestWriter
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.scrub import scrub
from tiered_mq.cold.topic_deletion import DeletionJournal, delete_topic_objects
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.errors import ObjectStoreError, OffsetOutOfRangeError
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)
PREFIX = "cluster1"
OLD, NEW = "a" * 32, "b" * 32


@pytest.fixture
def mem() -> MemoryStore:
    return MemoryStore.named(uuid.uuid4().hex)


def manager(
    mem: MemoryStore,
    cache_dir: Path,
    topic_ids: Callable[[str], str | None],
    journal: Path | None = None,
) -> RemoteLogManager:
    return RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        cache_dir,
        cache_bytes=1 << 20,
        chunk_size=512,
        settings=UploaderSettings(check_interval_s=3600, retry_initial_s=0.01, retry_max_s=0.02),
        clock=Clock(),
        topic_ids=topic_ids,
        deletion_journal=journal,
    )


async def uploaded(rlm: RemoteLogManager, log: LocalLog, epoch: int = 0) -> PartitionManifest:
    """``log`` led by ``rlm`` and its rolled segments uploaded by one pass."""
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset, leader_epoch=epoch)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()
    return uploader.manifest


def stored_manifest(
    mem: MemoryStore, topic: str = "orders", partition: int = 0
) -> PartitionManifest:
    return parse_partition_manifest(mem.get(layout.manifest_key(PREFIX, topic, partition))[0])


def segment_keys(mem: MemoryStore, topic: str = "orders") -> set[str]:
    return {
        o.key for o in mem.list(layout.topic_prefix(PREFIX, topic)) if not o.key.endswith(".json")
    }


# ---- format -------------------------------------------------------------------------------


def test_topic_id_round_trips_and_old_manifests_stay_readable() -> None:
    m = PartitionManifest("orders", 0, 3, topic_id=NEW)
    assert json.loads(m.to_json())["topic_id"] == NEW
    assert parse_partition_manifest(m.to_json()).topic_id == NEW
    old = PartitionManifest("orders", 0, 3)  # written before topic ids
    assert "topic_id" not in json.loads(old.to_json())
    assert parse_partition_manifest(old.to_json()) == old
    doc = {"version": 1, "topic": "orders", "partition": 0, "segments": []}
    assert parse_partition_manifest(json.dumps(doc)).topic_id is None
    tm = TopicManifest("orders", 3, {"retention.ms": "-1"}, NEW)
    assert parse_topic_manifest(tm.to_json()) == tm
    assert parse_topic_manifest(TopicManifest("orders", 3).to_json()).topic_id is None


def test_only_two_known_different_ids_are_foreign() -> None:
    assert is_foreign(OLD, NEW)
    assert not is_foreign(NEW, NEW)
    assert not is_foreign(None, NEW)  # an old manifest: adopted (and stamped)
    assert not is_foreign(OLD, None)  # no id to judge with


# ---- writer -------------------------------------------------------------------------------


async def test_writer_replaces_a_foreign_manifest_whatever_its_epoch(mem: MemoryStore) -> None:
    store = ThreadedStore(mem, inline=True)
    key = layout.manifest_key(PREFIX, TP.topic, TP.partition)
    mem.put_if_absent(key, PartitionManifest("orders", 0, 9, 500, topic_id=OLD).to_json())
    writer = ManifestWriter(store, PREFIX, TP, leader_epoch=0, topic_id=NEW)
    loaded = await writer.load()  # epoch 9 > 0, but another topic's: no FencedError
    assert writer.foreign is not None and writer.foreign.topic_id == OLD
    assert (loaded.topic_id, loaded.log_start_offset, loaded.segments) == (NEW, 0, [])
    await writer.commit(lambda m: None)
    written = stored_manifest(mem)
    assert (written.topic_id, written.leader_epoch, written.log_start_offset) == (NEW, 0, 0)
    assert writer.foreign is None
    # once written, a manifest of another id means another incarnation took the key over
    mem.put(key, PartitionManifest("orders", 0, 0, topic_id=OLD).to_json())
    with pytest.raises(FencedError, match="topic id"):
        await writer.commit(lambda m: setattr(m, "log_start_offset", 1))


async def test_writer_stamps_its_id_on_a_manifest_without_one(mem: MemoryStore) -> None:
    key = layout.manifest_key(PREFIX, TP.topic, TP.partition)
    mem.put_if_absent(key, PartitionManifest("orders", 0, 2, 40).to_json())
    writer = ManifestWriter(ThreadedStore(mem, inline=True), PREFIX, TP, 2, topic_id=NEW)
    assert (await writer.load()).log_start_offset == 40  # adopted
    assert writer.foreign is None
    await writer.commit(lambda m: None)
    assert (stored_manifest(mem).topic_id, stored_manifest(mem).log_start_offset) == (NEW, 40)


# ---- uploader and reader ------------------------------------------------------------------


async def test_new_incarnation_replaces_the_manifest_and_uploads_from_offset_0(
    mem: MemoryStore, tmp_path: Path
) -> None:
    ids = {"orders": OLD}
    old_rlm = manager(mem, tmp_path / "c1", ids.get)
    old_log = open_log(tmp_path / "old" / "orders-0")
    fill(old_log, 3)
    old = await uploaded(old_rlm, old_log, epoch=5)
    assert old.topic_id == OLD and old.end_offset() == 59
    old_keys = segment_keys(mem)
    await old_rlm.close()
    # recreated with the same name (bucket deletion never happened): same offsets, new bytes
    ids["orders"] = NEW
    rlm = manager(mem, tmp_path / "c2", ids.get)
    published: list[str] = []

    async def publish(topic: str) -> None:
        published.append(topic)
        await rlm.write_topic_manifest(topic, 1, {}, ids[topic])

    rlm.on_topic_manifest_needed = publish
    new_log = open_log(tmp_path / "new" / "orders-0")
    fill(new_log, 2, records_per_batch=2)
    assert local_bytes(new_log, 0) != local_bytes(old_log, 0)
    # before the new leader's first pass the reader already ignores the old manifest
    assert (await rlm.remote_manifest(TP)).segments == []
    with pytest.raises(OffsetOutOfRangeError):
        await rlm.read(TP, 0, 1 << 20)
    manifest = await uploaded(rlm, new_log)
    assert published == ["orders"]  # topic.json of the new id before the manifest
    assert (
        parse_topic_manifest(mem.get(layout.topic_manifest_key(PREFIX, "orders"))[0]).topic_id
        == NEW
    )
    assert (manifest.topic_id, manifest.leader_epoch, manifest.end_offset()) == (NEW, 0, 19)
    assert stored_manifest(mem).topic_id == NEW
    assert not old_keys & segment_keys(mem)  # the old incarnation's objects were deleted
    assert await rlm.read(TP, 0, 1 << 20) == local_bytes(
        new_log, 0, len(await rlm.read(TP, 0, 1 << 20))
    )
    await rlm.close()
    old_log.close()
    new_log.close()


async def test_first_manifest_waits_for_topic_json_of_its_id(
    mem: MemoryStore, tmp_path: Path
) -> None:
    rlm = manager(mem, tmp_path / "c", {"orders": NEW}.get)

    async def unreachable(topic: str) -> None:  # the registry's publish failed (logged)
        return None

    rlm.on_topic_manifest_needed = unreachable
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    with pytest.raises(ObjectStoreError, match=r"topic\.json"):
        await uploaded(rlm, log)
    assert mem.list(layout.topic_prefix(PREFIX, "orders")) == []
    await rlm.close()
    log.close()


# ---- deletion -----------------------------------------------------------------------------


async def test_deletion_takes_only_the_deleted_incarnations_objects(
    mem: MemoryStore, tmp_path: Path
) -> None:
    store = ThreadedStore(mem, inline=True)
    ids = {"orders": OLD}
    a = manager(mem, tmp_path / "c1", ids.get)
    log0 = open_log(tmp_path / "a" / "orders-0")
    fill(log0, 2)
    await uploaded(a, log0)
    p1 = TopicPartition("orders", 1)
    log1 = open_log(tmp_path / "a" / "orders-1")
    fill(log1, 1)
    a.on_become_leader(p1, log1, log1.config, lambda: log1.log_end_offset)
    up1 = a.uploader(p1)
    assert up1 is not None
    await up1.stop()
    await up1.run_pass()
    await a.write_topic_manifest("orders", 2, {}, OLD)
    await a.close()
    orphan = layout.segment_key(PREFIX, "orders", 1, 999, 0, "dead", "log")
    mem.put(orphan, b"x")
    # partition 0 already taken over by the new incarnation (one partition only)
    ids["orders"] = NEW
    b = manager(mem, tmp_path / "c2", ids.get)
    log_b = open_log(tmp_path / "b" / "orders-0")
    fill(log_b, 1)
    await uploaded(b, log_b)
    await b.write_topic_manifest("orders", 1, {}, NEW)
    kept = segment_keys(mem)
    count = await delete_topic_objects(store, PREFIX, "orders", OLD)
    assert count > 0
    left = {o.key for o in mem.list(layout.topic_prefix(PREFIX, "orders"))}
    assert left == {
        layout.topic_manifest_key(PREFIX, "orders"),
        layout.manifest_key(PREFIX, "orders", 0),
        *{k for s in stored_manifest(mem).segments for k in s.objects.values() if k},
    }
    assert left - {layout.topic_manifest_key(PREFIX, "orders")} <= kept | {
        layout.manifest_key(PREFIX, "orders", 0)
    }
    assert await delete_topic_objects(store, PREFIX, "orders", OLD) == 0  # idempotent
    await b.close()
    for log in (log0, log1, log_b):
        log.close()


async def test_deletion_retries_in_the_background_and_resumes_after_a_restart(
    mem: MemoryStore, tmp_path: Path
) -> None:
    journal = tmp_path / "remote-log-deletions.json"
    ids: dict[str, str] = {"orders": OLD}
    a = manager(mem, tmp_path / "c1", ids.get, journal)
    await a.start()
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    await uploaded(a, log)
    await a.record_topic_deletion("orders", OLD)
    del ids["orders"]
    mem.fail_next("list", ObjectStoreError("x", "unreachable"), times=1000)
    assert await a.delete_topic("orders", OLD) == 0  # at once, whatever the bucket does
    await asyncio.sleep(0.1)
    assert a.deleter.pending("orders")
    assert DeletionJournal(journal).load() == [("orders", OLD)]
    await a.close()  # the broker stops (or dies) before the bucket is back
    mem._faults.clear()
    assert segment_keys(mem)
    b = manager(mem, tmp_path / "c2", ids.get, journal)
    await b.start()
    await b.deleter.wait("orders")
    assert mem.list(layout.topic_prefix(PREFIX, "orders")) == []
    assert DeletionJournal(journal).load() == []
    await b.close()
    log.close()


async def test_journal_entry_of_a_live_topic_is_dropped(mem: MemoryStore, tmp_path: Path) -> None:
    """A crash after the journal write but before the coordinator's deletion: the topic lives,
    its objects stay."""
    journal = tmp_path / "remote-log-deletions.json"
    DeletionJournal(journal).add(("orders", NEW))
    mem.put(layout.segment_key(PREFIX, "orders", 0, 0, 0, "u1", "log"), b"x")
    rlm = manager(mem, tmp_path / "c", {"orders": NEW}.get, journal)
    await rlm.start()
    assert not rlm.deleter.pending("orders")
    assert DeletionJournal(journal).load() == []
    assert len(segment_keys(mem)) == 1
    await rlm.close()


async def test_new_uploader_waits_for_the_pending_deletion(
    mem: MemoryStore, tmp_path: Path
) -> None:
    ids = {"orders": OLD}
    rlm = manager(mem, tmp_path / "c", ids.get)
    await rlm.start()
    old_log = open_log(tmp_path / "old" / "orders-0")
    fill(old_log, 2)
    await uploaded(rlm, old_log)
    old_keys = segment_keys(mem)
    mem.fail_next("list", ObjectStoreError("x", "unreachable"), times=3)
    ids["orders"] = NEW
    await rlm.delete_topic("orders", OLD)
    new_log = open_log(tmp_path / "new" / "orders-0")
    fill(new_log, 1)
    manifest = await uploaded(rlm, new_log)  # waited: the deletion went first
    assert not rlm.deleter.pending("orders")
    assert manifest.topic_id == NEW and manifest.end_offset() == 19
    assert not old_keys & segment_keys(mem)
    await rlm.close()
    old_log.close()
    new_log.close()


# ---- scrub --------------------------------------------------------------------------------


async def test_scrub_removes_a_deleted_incarnations_manifest_and_objects(
    mem: MemoryStore, tmp_path: Path
) -> None:
    ids = {"orders": OLD}
    rlm = manager(mem, tmp_path / "c", ids.get)
    log = open_log(tmp_path / "orders-0")
    fill(log, 2)
    await uploaded(rlm, log)
    await rlm.close()
    report = scrub(mem, PREFIX)  # no topic.json: judged by references only
    assert report.stale_manifests == [] and report.orphans == []
    mem.put(
        layout.topic_manifest_key(PREFIX, "orders"), TopicManifest("orders", 1, {}, NEW).to_json()
    )
    report = scrub(mem, PREFIX, delete=True)
    assert report.stale_manifests == [layout.manifest_key(PREFIX, "orders", 0)]
    assert len(report.orphans) == 6  # 2 x (log, index, timeindex)
    assert [o.key for o in mem.list(layout.topic_prefix(PREFIX, "orders"))] == [
        layout.topic_manifest_key(PREFIX, "orders")
    ]
    log.close()
