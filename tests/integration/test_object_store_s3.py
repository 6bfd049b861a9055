"""The ObjectStore contract against a real S3-compatible server (SeaweedFS), plus what only a
real server shows: conditional puts, server down and back, sync store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401  (fixture)
from tests.unit.cold.object_store_contract import *  # noqa: F403  (the contract tests)
from tiered_mq.cold.object_store import ObjectStore, open_object_store, open_sync_store
from tiered_mq.errors import ObjectStoreError, PreconditionFailedError

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
