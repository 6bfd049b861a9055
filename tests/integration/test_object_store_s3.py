"""The ObjectStore contract against a real S3-compatible server (SeaweedFS), plus what only a
real server shows: conditional puts, server down and back, sync store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401  (fixture)
from tests.unit.cold.helpers import T0, Clock, fill, local_bytes, open_log
from tests.unit.cold.object_store_contract import *  # noqa: F403  (the contract tests)
from tiered_mq.cold import s3_store
from tiered_mq.cold.object_store import ObjectStore, open_object_store, open_sync_store
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.s3_store import content_md5 as s3_store_md5
from tiered_mq.cold.scrub import scrub
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.errors import ObjectStoreError, PreconditionFailedError
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

pytestmark = pytest.mark.integration


@pytest.fixture
async def store(seaweedfs: SeaweedFS) -> AsyncIterator[ObjectStore]:  # noqa: F811
    s = open_object_store(f"s3://{seaweedfs.new_bucket()}/prefix", **seaweedfs.store_options())
    yield s
    await s.close()


async def test_missing_bucket_is_named(seaweedfs: SeaweedFS) -> None:  # noqa: F811
    store = open_object_store("s3://bucket-that-is-not-there", **seaweedfs.store_options())
    with pytest.raises(ObjectStoreError, match="does not exist"):
        await store.get("k")
    await store.close()


async def test_a_put_body_must_match_its_content_md5(
    store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every PUT carries Content-MD5, so the server refuses a body that differs from what the
    broker meant to write (a PUT cut short by a crash once left an empty manifest.json)."""
    await store.put("m.json", b'{"v": 1}')
    monkeypatch.setattr(s3_store, "content_md5", lambda data: s3_store_md5(b"something else"))
    with pytest.raises(ObjectStoreError):
        await store.put("m.json", b'{"v": 2}')
    assert (await store.get("m.json"))[0] == b'{"v": 1}'


def test_sync_store_conditional_puts(seaweedfs: SeaweedFS) -> None:  # noqa: F811
    store = open_sync_store(f"s3://{seaweedfs.new_bucket()}", **seaweedfs.store_options())
    etag = store.put_if_absent("m.json", b"1")
    with pytest.raises(PreconditionFailedError):
        store.put_if_absent("m.json", b"2")
    etag2 = store.put_if_match("m.json", b"2", etag)
    with pytest.raises(PreconditionFailedError):
        store.put_if_match("m.json", b"3", etag)
    assert store.get("m.json") == (b"2", etag2)
    store.close()


@pytest.mark.slow
async def test_server_down_then_back(seaweedfs: SeaweedFS) -> None:  # noqa: F811
    bucket = seaweedfs.new_bucket()
    store = open_object_store(f"s3://{bucket}", **seaweedfs.store_options())
    await store.put("before", b"1")
    seaweedfs.stop()
    try:
        with pytest.raises(ObjectStoreError):
            await store.put("during", b"2")
    finally:
        seaweedfs.start()
    await store.put("after", b"3")
    assert [o.key for o in await store.list("")] == ["after", "before"]
    await store.close()


async def test_tiering_round_trip_on_seaweedfs(seaweedfs: SeaweedFS, tmp_path: Path) -> None:  # noqa: F811
    """Upload a real LocalLog's rolled segments, delete them locally, replay from the bucket,
    and inspect the bucket with the sync store (as the CLI and Spark do)."""
    bucket = seaweedfs.new_bucket()
    store = open_object_store(f"s3://{bucket}/c1", **seaweedfs.store_options())
    log = open_log(tmp_path / "orders-0", local_retention_bytes="0")
    fill(log, 3)
    expected = local_bytes(log, 0)
    rlm = RemoteLogManager(
        store,
        "c1",
        tmp_path / "cache",
        1 << 20,
        chunk_size=256,
        settings=UploaderSettings(check_interval_s=3600),
        clock=Clock(),
    )
    tp = TopicPartition("orders", 0)
    rlm.on_become_leader(tp, log, log.config, lambda: log.log_end_offset, leader_epoch=1)
    uploader = rlm.uploader(tp)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()
    assert [s.base_offset for s in log.segments()] == [60]  # all rolled segments left the disk
    replayed, offset = bytearray(), 0
    while offset < 60:
        data = await rlm.read(tp, offset, 700)
        replayed += data
        offset = iter_batches(data)[-1][1].next_offset
    assert bytes(replayed) == expected
    assert await rlm.offset_for_timestamp(tp, T0 + 42_000) == (42, T0 + 42_000)
    sync = open_sync_store(f"s3://{bucket}", **seaweedfs.store_options())
    assert scrub(sync, "c1").orphans == []
    assert await rlm.delete_topic("orders") == 1 + 3 * 3
    assert sync.list("c1/") == []
    await rlm.close()
    await store.close()
