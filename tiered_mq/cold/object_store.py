"""The object store seam: a few verbs on keys of one bucket, chosen by URL.

URLs (``open_object_store`` / ``open_sync_store``)::

    s3://bucket[/prefix]     S3 or an S3-compatible server (MinIO, SeaweedFS), aioboto3 / boto3;
                             credentials from the arguments, else the standard AWS chain
                             (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, ...)
    file:///path[?prefix=p]  a directory of the local filesystem (one file per key)
    memory://name[/prefix]   a process-wide dict, shared by every store opened with the same name

A store works on whole bucket keys: the URL's path after the bucket is the *prefix* under which
tiered-mq keeps its objects (``StoreURL.prefix``), passed separately to the layout functions.

Contract (checked by one test suite against memory, file, moto and SeaweedFS):

- ``put`` writes the whole object atomically and returns its ETag (an opaque string: compare it,
  never parse it).
- ``put_if_match(key, data, etag)`` writes only if the object's current ETag is ``etag``;
  ``put_if_absent`` only if the object does not exist; the loser gets ``PreconditionFailedError``.
  This is the optimistic concurrency that keeps a deposed leader from overwriting a manifest.
- ``get`` -> ``(bytes, etag)``; ``get_range(key, start, end_inclusive)`` -> the bytes in
  ``[start, min(end_inclusive, size - 1)]`` (empty when ``start >= size``).
- ``head`` -> ``ObjectInfo`` or ``None``; ``list(prefix)`` -> every ``ObjectInfo`` whose key starts
  with ``prefix``, sorted by key (the file store leaves ``etag`` empty in listings).
- ``delete`` and ``delete_many`` are idempotent (a missing key is not an error).
- Errors: ``ObjectNotFoundError(key)`` for a missing object, ``PreconditionFailedError`` for a
  conditional put that lost, ``ObjectStoreError(key, reason)`` for everything else, with the
  reason spelled out for wrong credentials and a missing bucket.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypedDict, TypeVar, Unpack, runtime_checkable
from urllib.parse import parse_qs, urlparse


class S3Options(TypedDict, total=False):
    """How to reach an ``s3://`` store (every key optional: the AWS SDK defaults then apply)."""

    endpoint_url: str | None  # an S3-compatible server; None: AWS
    region: str | None  # us-east-1 when an endpoint is given without one
    access_key: str | None  # None: the SDK's credential chain
    secret_key: str | None
    path_style: bool  # bucket in the path (MinIO, SeaweedFS) instead of the host name


class ObjectInfo(NamedTuple):
    key: str
    size: int
    etag: str


@runtime_checkable
class ObjectStore(Protocol):
    """Asynchronous object store (the broker's)."""

    async def put(self, key: str, data: bytes) -> str: ...
    async def put_if_match(self, key: str, data: bytes, etag: str) -> str: ...
    async def put_if_absent(self, key: str, data: bytes) -> str: ...
    async def get(self, key: str) -> tuple[bytes, str]: ...
    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes: ...
    async def head(self, key: str) -> ObjectInfo | None: ...
    async def list(self, prefix: str) -> list[ObjectInfo]: ...
    async def delete(self, key: str) -> None: ...
    async def delete_many(self, keys: Iterable[str]) -> None: ...
    async def close(self) -> None: ...


@runtime_checkable
class SyncObjectStore(Protocol):
    """The same verbs, blocking (CLI, Spark executors, the file store's core)."""

    def put(self, key: str, data: bytes) -> str: ...
    def put_if_match(self, key: str, data: bytes, etag: str) -> str: ...
    def put_if_absent(self, key: str, data: bytes) -> str: ...
    def get(self, key: str) -> tuple[bytes, str]: ...
    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes: ...
    def head(self, key: str) -> ObjectInfo | None: ...
    def list(self, prefix: str) -> list[ObjectInfo]: ...
    def delete(self, key: str) -> None: ...
    def delete_many(self, keys: Iterable[str]) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class StoreURL:
    """A parsed store URL: ``scheme`` (s3, file, memory), ``bucket`` (bucket, directory or
    memory name) and ``prefix`` (no leading or trailing slash, may be empty)."""

    scheme: str
    bucket: str
    prefix: str


def parse_store_url(url: str) -> StoreURL:
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    if scheme in ("s3", "s3a", "memory"):
        if not parsed.netloc:
            raise ValueError(f"{url}: missing bucket name")
        return StoreURL("s3" if scheme == "s3a" else scheme, parsed.netloc, parsed.path.strip("/"))
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"{url}: file URLs take an absolute path (file:///path)")
        prefix = parse_qs(parsed.query).get("prefix", [""])[0].strip("/")
        return StoreURL("file", parsed.path or "/", prefix)
    raise ValueError(f"{url}: unsupported object store scheme {scheme!r} (s3, file, memory)")


_T = TypeVar("_T")


class ThreadedStore:
    """An ``ObjectStore`` running a ``SyncObjectStore``'s calls in worker threads
    (``inline=True`` runs them on the loop: for the memory store, which never blocks)."""

    def __init__(self, sync: SyncObjectStore, *, inline: bool = False) -> None:
        self.sync = sync
        self._inline = inline

    async def _call(self, fn: Callable[..., _T], *args: object) -> _T:
        if self._inline:
            return fn(*args)
        return await asyncio.to_thread(functools.partial(fn, *args))

    async def put(self, key: str, data: bytes) -> str:
        return await self._call(self.sync.put, key, data)

    async def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        return await self._call(self.sync.put_if_match, key, data, etag)

    async def put_if_absent(self, key: str, data: bytes) -> str:
        return await self._call(self.sync.put_if_absent, key, data)

    async def get(self, key: str) -> tuple[bytes, str]:
        return await self._call(self.sync.get, key)

    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        return await self._call(self.sync.get_range, key, start, end_inclusive)

    async def head(self, key: str) -> ObjectInfo | None:
        return await self._call(self.sync.head, key)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self._call(self.sync.list, prefix)

    async def delete(self, key: str) -> None:
        await self._call(self.sync.delete, key)

    async def delete_many(self, keys: Iterable[str]) -> None:
        await self._call(self.sync.delete_many, list(keys))

    async def close(self) -> None:
        await self._call(self.sync.close)


def open_object_store(url: str, **s3: Unpack[S3Options]) -> ObjectStore:
    """The asynchronous store for ``url`` (see the module docstring for the schemes)."""
    parsed = parse_store_url(url)
    if parsed.scheme == "s3":
        from tiered_mq.cold.s3_store import S3Store

        return S3Store(parsed.bucket, **s3)
    return ThreadedStore(_open_local(parsed), inline=parsed.scheme == "memory")


def open_sync_store(url: str, **s3: Unpack[S3Options]) -> SyncObjectStore:
    """The blocking store for ``url`` (boto3 for ``s3://``): for tools and Spark executors."""
    parsed = parse_store_url(url)
    if parsed.scheme == "s3":
        from tiered_mq.cold.s3_store import SyncS3Store

        return SyncS3Store(parsed.bucket, **s3)
    return _open_local(parsed, clean_temp=False)


def _open_local(parsed: StoreURL, clean_temp: bool = True) -> SyncObjectStore:
    """``clean_temp``: a file store removes crashed puts' temporary files as it opens (the
    broker's store); the blocking stores of tools and Spark executors, opened often and
    mostly to read, leave that to the broker."""
    from tiered_mq.cold.local_stores import FileStore, MemoryStore

    if parsed.scheme == "memory":
        return MemoryStore.named(parsed.bucket)
    return FileStore(parsed.bucket, clean_temp=clean_temp)
