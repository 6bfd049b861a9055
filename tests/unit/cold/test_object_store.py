"""ObjectStore contract on memory, file and moto; URL parsing; error translation; sync stores."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from tests.integration.tmpfs import mounted_tmpfs
from tests.unit.cold.conftest import MotoS3
from tests.unit.cold.object_store_contract import *  # noqa: F403  (the contract tests)
from tiered_mq.cold.local_stores import FileStore
from tiered_mq.cold.object_store import (
    ObjectStore,
    StoreURL,
    open_object_store,
    open_sync_store,
    parse_store_url,
)
from tiered_mq.cold.s3_store import translate_error
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError, PreconditionFailedError


@pytest.fixture(params=["memory", "file", "moto"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, moto_s3: MotoS3
) -> AsyncIterator[ObjectStore]:
    if request.param == "memory":
        s = open_object_store(f"memory://{uuid.uuid4().hex}")
    elif request.param == "file":
        s = open_object_store(f"file://{tmp_path}/bucket")
    else:
        s = open_object_store(f"s3://{moto_s3.new_bucket()}", **moto_s3.store_options())
    yield s
    await s.close()


def test_parse_store_url() -> None:
    assert parse_store_url("s3://bkt/a/b/") == StoreURL("s3", "bkt", "a/b")
    assert parse_store_url("s3a://bkt") == StoreURL("s3", "bkt", "")
    assert parse_store_url("file:///var/data?prefix=/x/") == StoreURL("file", "/var/data", "x")
    assert parse_store_url("memory://m/p") == StoreURL("memory", "m", "p")
    with pytest.raises(ValueError, match="unsupported"):
        parse_store_url("gs://bucket")
    with pytest.raises(ValueError, match="bucket"):
        parse_store_url("s3:///nobucket")


def test_memory_urls_share_objects() -> None:
    name = uuid.uuid4().hex
    a = open_sync_store(f"memory://{name}")
    b = open_sync_store(f"memory://{name}/other-prefix")
    a.put("k", b"v")
    assert b.get("k")[0] == b"v"


def test_file_store_is_atomic_and_hides_temporaries(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.put("a/b", b"1")
    (tmp_path / "a" / ".tmp-leftover").write_bytes(b"partial")
    assert [o.key for o in store.list("")] == ["a/b"]
    with pytest.raises(ObjectStoreError, match="invalid key"):
        store.put("a/../b", b"x")


def test_file_store_put_on_a_full_disk_leaves_no_temporary(tmp_path: Path) -> None:
    """A put the disk refuses (a real full tmpfs) fails with ObjectStoreError and removes its
    temporary file, so repeated failed uploads do not eat the space that is left."""
    with mounted_tmpfs(tmp_path / "small", "size=1m") as root:
        store = FileStore(root)
        store.put("kept", b"k" * 1000)
        for _ in range(3):
            with pytest.raises(ObjectStoreError, match="write failed"):
                store.put("a/big", b"x" * (2 << 20))
        assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["kept"]
        assert store.get("kept")[0] == b"k" * 1000


def test_file_store_conditional_put_across_instances(tmp_path: Path) -> None:
    a, b = FileStore(tmp_path), FileStore(tmp_path)
    etag = a.put_if_absent("m", b"1")
    b.put_if_match("m", b"2", etag)
    with pytest.raises(PreconditionFailedError):
        a.put_if_match("m", b"3", etag)


def test_sync_s3_store_on_moto(moto_s3: MotoS3) -> None:
    bucket = moto_s3.new_bucket()
    store = open_sync_store(f"s3://{bucket}/pre", **moto_s3.store_options())
    etag = store.put_if_absent("pre/x", b"abc")
    with pytest.raises(PreconditionFailedError):
        store.put_if_absent("pre/x", b"abc")
    assert store.put_if_match("pre/x", b"abcd", etag) != etag
    assert store.get_range("pre/x", 1, 2) == b"bc"
    assert [(o.key, o.size) for o in store.list("pre/")] == [("pre/x", 4)]
    store.delete_many(["pre/x"])
    assert store.head("pre/x") is None
    with pytest.raises(ObjectNotFoundError):
        store.get("pre/x")
    store.close()


async def test_missing_bucket_is_named(moto_s3: MotoS3) -> None:
    store = open_object_store("s3://no-such-bucket-here", **moto_s3.store_options())
    with pytest.raises(ObjectStoreError, match=r"no-such-bucket-here.*does not exist"):
        await store.put("k", b"v")
    with pytest.raises(ObjectStoreError, match="NoSuchBucket"):
        await store.list("")
    await store.close()


async def test_head_and_delete_answer_a_missing_key_but_not_a_missing_bucket(
    moto_s3: MotoS3,
) -> None:
    """A missing object is HEAD's None and a DELETE that succeeds; a missing bucket is an
    error for DELETE (NoSuchBucket), in the asyncio and the sync store. (HEAD's 404 has no
    body to say which is missing: it answers None for a missing bucket too.)"""
    options = moto_s3.store_options()
    bucket = moto_s3.new_bucket()
    store = open_object_store(f"s3://{bucket}", **options)
    assert await store.head("never-written") is None
    await store.delete("never-written")
    await store.close()
    sync = open_sync_store(f"s3://{bucket}", **options)
    assert sync.head("never-written") is None
    sync.delete("never-written")
    sync.close()

    store = open_object_store("s3://no-such-bucket-here", **options)
    with pytest.raises(ObjectStoreError, match="does not exist"):
        await store.delete("k")
    await store.close()
    sync = open_sync_store("s3://no-such-bucket-here", **options)
    with pytest.raises(ObjectStoreError, match="does not exist"):
        sync.delete("k")
    sync.close()


def _client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "PutObject",
    )


@pytest.mark.parametrize(
    ("code", "status", "kind", "words"),
    [
        ("AccessDenied", 403, ObjectStoreError, "access denied"),
        ("InvalidAccessKeyId", 403, ObjectStoreError, "AWS_ACCESS_KEY_ID"),
        ("SignatureDoesNotMatch", 403, ObjectStoreError, "AWS_SECRET_ACCESS_KEY"),
        ("NoSuchBucket", 404, ObjectStoreError, "does not exist"),
        ("NoSuchKey", 404, ObjectNotFoundError, "no such object"),
        ("PreconditionFailed", 412, PreconditionFailedError, "conditional put lost"),
        ("ConditionalRequestConflict", 409, PreconditionFailedError, "conditional put lost"),
        ("SlowDown", 503, ObjectStoreError, "SlowDown"),
    ],
)
def test_translate_error(code: str, status: int, kind: type, words: str) -> None:
    error = translate_error("bkt", "some/key", _client_error(code, status))
    assert type(error) is kind
    assert error.key == "some/key"
    assert words in str(error)
    assert "some/key" in str(error)
