"""Blocking, read-only access to a tiered-mq bucket for the Spark driver and executors.

URLs (the data source's ``path`` option)::

    s3://bucket[/prefix]    (s3a:// is accepted as a synonym) read with boto3
    file:///dir[?prefix=p]  the same layout in a local directory (the dev broker's bucket)

Object keys are relative to the bucket root; ``prefix`` is where tiered-mq's ``topics/`` tree
starts (DESIGN.md section 3). S3 settings come from :class:`S3Settings` (the data source's
``s3.*`` options); what is not given comes from the standard AWS chain (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION, profiles, instance roles).

Why not ``cold.object_store``: executors need only three read verbs, one of them a listing with
a delimiter (topic discovery must not list every segment key), and nothing asynchronous.

Errors: a missing object raises ObjectNotFoundError(key), anything else ObjectStoreError(key)
with the server's code. Clients are cached per process and settings (an executor's Python
worker is reused across tasks, and creating a boto3 client costs ~100 ms).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from tiered_mq.cold.object_store import parse_store_url
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError


@dataclass(frozen=True)
class S3Settings:
    endpoint_url: str | None = None
    region: str | None = None
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    path_style: bool = False


@dataclass(frozen=True)
class BucketURL:
    scheme: str  # "s3" or "file"
    bucket: str  # bucket name, or the root directory for file://
    prefix: str  # no leading or trailing slash; may be empty

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def describe(self, key: str) -> str:
        """The full name of an object for messages: ``s3://bucket/key`` or a file path."""
        if self.scheme == "s3":
            return f"s3://{self.bucket}/{key}"
        return str(Path(self.bucket) / key)


def parse_bucket_url(url: str) -> BucketURL:
    """An ``s3``/``s3a`` or ``file`` URL as the broker reads its ``--cold-url``
    (:func:`tiered_mq.cold.object_store.parse_store_url`), or a bare absolute path (a
    ``file`` URL without prefix); ValueError for anything else (``memory`` too: a broker's
    in-process store)."""
    scheme = urlparse(url).scheme.lower()
    if scheme in ("s3", "s3a", "file"):
        parsed = parse_store_url(url)
        return BucketURL(parsed.scheme, parsed.bucket, parsed.prefix)
    if not scheme and url.startswith("/"):
        return BucketURL("file", url, "")
    raise ValueError(f"{url}: unsupported bucket URL (s3://bucket/prefix or file:///dir)")


class Bucket(Protocol):
    url: BucketURL

    def get(self, key: str) -> bytes: ...
    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes: ...
    def list_dirs(self, prefix: str) -> list[str]:
        """Names of the "directories" directly under ``prefix`` (which ends with ``/``)."""
        ...


class S3Bucket:
    def __init__(self, url: BucketURL, client: Any) -> None:
        self.url = url
        self._client = client

    def _error(self, key: str, exc: Exception) -> ObjectStoreError:
        response = getattr(exc, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in ("NoSuchKey", "404", "NotFound") or status == 404:
            return ObjectNotFoundError(key, f"no such object in bucket {self.url.bucket!r}")
        return ObjectStoreError(key, f"{code or type(exc).__name__}: {exc}")

    def get(self, key: str) -> bytes:
        try:
            response = self._client.get_object(Bucket=self.url.bucket, Key=key)
            data: bytes = response["Body"].read()
        except Exception as exc:
            raise self._error(key, exc) from exc
        return data

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        try:
            response = self._client.get_object(
                Bucket=self.url.bucket, Key=key, Range=f"bytes={start}-{end_inclusive}"
            )
            data: bytes = response["Body"].read()
        except Exception as exc:
            raise self._error(key, exc) from exc
        return data

    def list_dirs(self, prefix: str) -> list[str]:
        names: list[str] = []
        try:
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.url.bucket, Prefix=prefix, Delimiter="/"
            )
            for page in pages:
                for common in page.get("CommonPrefixes", []):
                    names.append(common["Prefix"][len(prefix) :].rstrip("/"))
        except Exception as exc:
            raise self._error(prefix, exc) from exc
        return sorted(names)


class FileBucket:
    def __init__(self, url: BucketURL) -> None:
        self.url = url
        self.root = Path(url.bucket)

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise ObjectNotFoundError(key, f"no such file under {self.root}") from exc
        except OSError as exc:
            raise ObjectStoreError(key, f"read failed: {exc}") from exc

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        try:
            with open(self._path(key), "rb") as f:
                return os.pread(f.fileno(), max(0, end_inclusive + 1 - start), start)
        except FileNotFoundError as exc:
            raise ObjectNotFoundError(key, f"no such file under {self.root}") from exc
        except OSError as exc:
            raise ObjectStoreError(key, f"read failed: {exc}") from exc

    def list_dirs(self, prefix: str) -> list[str]:
        directory = self._path(prefix.rstrip("/")) if prefix.strip("/") else self.root
        if not directory.is_dir():
            return []
        return sorted(p.name for p in directory.iterdir() if p.is_dir() and p.name[0] != ".")


_clients: dict[tuple[BucketURL, S3Settings], Bucket] = {}
_clients_lock = threading.Lock()


def open_bucket(url: str, settings: S3Settings | None = None) -> Bucket:
    """The bucket for ``url``, cached per process (clients are thread-safe)."""
    parsed = parse_bucket_url(url)
    settings = settings or S3Settings()
    with _clients_lock:
        found = _clients.get((parsed, settings))
        if found is None:
            found = FileBucket(parsed) if parsed.scheme == "file" else _s3(parsed, settings)
            _clients[(parsed, settings)] = found
        return found


def _s3(url: BucketURL, settings: S3Settings) -> S3Bucket:
    import boto3
    from botocore.config import Config

    options: dict[str, Any] = {
        "retries": {"max_attempts": 5, "mode": "standard"},
        "connect_timeout": 10,
        "read_timeout": 60,
        "max_pool_connections": 16,
    }
    if settings.path_style:
        options["s3"] = {"addressing_style": "path"}
    if settings.endpoint_url:
        options["request_checksum_calculation"] = "when_required"
        options["response_checksum_validation"] = "when_required"
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=settings.access_key,
        aws_secret_access_key=settings.secret_key,
        aws_session_token=settings.session_token,
        config=Config(**options),
    )
    return S3Bucket(url, client)
