"""The ObjectStore contract: imported by every module that provides a ``store`` fixture
(memory, file and moto here; SeaweedFS in tests/integration/test_object_store_s3.py)."""

from __future__ import annotations

import asyncio

import pytest

from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError, PreconditionFailedError


async def test_put_get_head_roundtrip(store: ObjectStore) -> None:
    etag = await store.put("a/b/one.log", b"hello world")
    data, got_etag = await store.get("a/b/one.log")
    assert data == b"hello world"
    assert got_etag == etag
    info = await store.head("a/b/one.log")
    assert info is not None
    assert (info.key, info.size, info.etag) == ("a/b/one.log", 11, etag)


async def test_put_overwrites_and_changes_etag(store: ObjectStore) -> None:
    first = await store.put("k", b"v1")
    second = await store.put("k", b"v2-longer")
    assert first != second
    assert await store.get("k") == (b"v2-longer", second)


async def test_missing_object(store: ObjectStore) -> None:
    assert await store.head("nope/missing") is None
    with pytest.raises(ObjectNotFoundError) as info:
        await store.get("nope/missing")
    assert info.value.key == "nope/missing"
    with pytest.raises(ObjectNotFoundError):
        await store.get_range("nope/missing", 0, 10)


async def test_get_range(store: ObjectStore) -> None:
    data = bytes(range(256)) * 40
    await store.put("r", data)
    assert await store.get_range("r", 0, 0) == data[:1]
    assert await store.get_range("r", 100, 5099) == data[100:5100]
    assert await store.get_range("r", 10000, 20000) == data[10000:]
    assert await store.get_range("r", len(data), len(data) + 10) == b""


async def test_put_if_absent(store: ObjectStore) -> None:
    etag = await store.put_if_absent("m/manifest.json", b"{}")
    with pytest.raises(PreconditionFailedError) as info:
        await store.put_if_absent("m/manifest.json", b'{"x": 1}')
    assert info.value.key == "m/manifest.json"
    assert await store.get("m/manifest.json") == (b"{}", etag)


async def test_put_if_match(store: ObjectStore) -> None:
    etag = await store.put_if_absent("m.json", b"v1")
    etag2 = await store.put_if_match("m.json", b"v2", etag)
    assert etag2 != etag
    # A writer still holding the first ETag (a deposed leader) loses.
    with pytest.raises(PreconditionFailedError):
        await store.put_if_match("m.json", b"stale", etag)
    assert await store.get("m.json") == (b"v2", etag2)
    etag3 = await store.put_if_match("m.json", b"v3", etag2)
    assert await store.get("m.json") == (b"v3", etag3)


async def test_put_if_match_on_missing_object_fails(store: ObjectStore) -> None:
    with pytest.raises(ObjectStoreError):
        await store.put_if_match("absent.json", b"v", '"0123456789abcdef0123456789abcdef"')
    assert await store.head("absent.json") is None


async def test_concurrent_conditional_puts_one_winner(store: ObjectStore) -> None:
    etag = await store.put_if_absent("race.json", b"base")
    results = await asyncio.gather(
        *(store.put_if_match("race.json", f"w{i}".encode(), etag) for i in range(6)),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, str)]
    losers = [r for r in results if isinstance(r, PreconditionFailedError)]
    assert len(winners) == 1, results
    assert len(losers) == 5, results
    data, final = await store.get("race.json")
    assert final == winners[0]
    assert data in {f"w{i}".encode() for i in range(6)}


async def test_list_by_prefix_sorted(store: ObjectStore) -> None:
    keys = [f"p/topics/t/0/{i:020d}-0-u.log" for i in (30, 10, 20)]
    for i, key in enumerate(keys):
        await store.put(key, b"x" * (i + 1))
    await store.put("p/topics/t/1/x.log", b"y")
    await store.put("q/other", b"z")
    listed = await store.list("p/topics/t/0/")
    assert [o.key for o in listed] == sorted(keys)
    assert {o.key: o.size for o in listed} == {keys[0]: 1, keys[1]: 2, keys[2]: 3}
    assert [o.key for o in await store.list("p/topics/t/")] == [*sorted(keys), "p/topics/t/1/x.log"]
    assert await store.list("nothing/") == []


async def test_list_many_pages(store: ObjectStore) -> None:
    keys = [f"many/{i:05d}" for i in range(1050)]
    sem = asyncio.Semaphore(32)

    async def put(key: str) -> None:
        async with sem:
            await store.put(key, b".")

    await asyncio.gather(*(put(k) for k in keys))
    assert [o.key for o in await store.list("many/")] == keys
    await store.delete_many(keys)
    assert await store.list("many/") == []


async def test_delete_is_idempotent(store: ObjectStore) -> None:
    await store.put("d/1", b"1")
    await store.put("d/2", b"2")
    await store.put("d/3", b"3")
    await store.delete("d/1")
    await store.delete("d/1")
    assert await store.head("d/1") is None
    await store.delete_many(["d/2", "d/3", "d/never"])
    assert await store.list("d/") == []


async def test_binary_content_survives(store: ObjectStore) -> None:
    data = bytes(range(256)) * 1000 + b"\x00\xff"
    await store.put("bin/blob", data)
    assert (await store.get("bin/blob"))[0] == data
