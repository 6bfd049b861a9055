"""S3 object stores: ``S3Store`` (aioboto3, the broker's) and ``SyncS3Store`` (boto3, tools).

Both talk to AWS S3 or any S3-compatible server (MinIO, SeaweedFS) through ``endpoint_url``;
``path_style=True`` addresses ``endpoint/bucket/key`` instead of ``bucket.endpoint/key`` (needed
by most self-hosted servers). Credentials not given come from the standard AWS chain.
With a custom endpoint the newer boto checksum headers are only sent when an operation requires
them, since not every S3-compatible server understands them.

Conditional puts map to ``If-Match`` / ``If-None-Match: *``; a 412 (or S3's 409
ConditionalRequestConflict, a concurrent conditional write) becomes ``PreconditionFailedError``.
``translate_error`` turns every other botocore failure into ``ObjectStoreError`` with a reason a
person can act on (wrong credentials, missing bucket, endpoint unreachable).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Iterable
from typing import Any, Unpack

import aioboto3
import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from tiered_mq.cold.object_store import ObjectInfo, S3Options
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError, PreconditionFailedError

_CREDENTIAL_CODES = {
    "AccessDenied": "access denied: the credentials are not allowed to use this bucket",
    "InvalidAccessKeyId": "invalid access key id: check AWS_ACCESS_KEY_ID / --s3-access-key",
    "SignatureDoesNotMatch": "signature mismatch: check AWS_SECRET_ACCESS_KEY / --s3-secret-key",
    "InvalidToken": "invalid session token: check AWS_SESSION_TOKEN",
    "ExpiredToken": "expired session token",
}
_NOT_FOUND_CODES = {"NoSuchKey", "404", "NotFound"}
_PRECONDITION_CODES = {"PreconditionFailed", "412", "ConditionalRequestConflict"}


def translate_error(bucket: str, key: str, exc: Exception) -> ObjectStoreError:
    """The store error for a botocore exception raised while working on ``key``."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code == "NoSuchBucket":
            return ObjectStoreError(key, f"bucket {bucket!r} does not exist (NoSuchBucket)")
        if code in _CREDENTIAL_CODES:
            return ObjectStoreError(key, f"{_CREDENTIAL_CODES[code]} ({code}, bucket {bucket!r})")
        if code in _PRECONDITION_CODES or status == 412:
            return PreconditionFailedError(key, f"conditional put lost ({code or status})")
        if code in _NOT_FOUND_CODES or status == 404:
            return ObjectNotFoundError(key, f"no such object in bucket {bucket!r}")
        if status == 403:
            return ObjectStoreError(key, f"forbidden (403): check the credentials for {bucket!r}")
        return ObjectStoreError(key, f"{code or status}: {error.get('Message', exc)}")
    if isinstance(exc, EndpointConnectionError):
        return ObjectStoreError(key, f"cannot reach the S3 endpoint: {exc}")
    return ObjectStoreError(key, f"{type(exc).__name__}: {exc}")


def raise_unless_not_found(bucket: str, key: str, exc: Exception) -> None:
    """Raise ``exc`` as its store error (:func:`translate_error`) unless that error is
    ObjectNotFoundError (NoSuchKey, 404): for HEAD (the object's absence is the answer, None)
    and DELETE (already gone is done, as S3's own DELETE of a missing key succeeds)."""
    error = translate_error(bucket, key, exc)
    if type(error) is not ObjectNotFoundError:
        raise error from exc


def content_md5(data: bytes) -> str:
    """The Content-MD5 header of a PUT body: the server refuses a body that does not match it
    (BadDigest), so a PUT cut short by a crash is never stored truncated. Needed because
    checksums are only sent "when required" to S3-compatible servers (see ``_config``): a
    SeaweedFS PUT interrupted by a SIGKILL left an empty manifest.json behind."""
    return base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode()


def _config(endpoint_url: str | None, path_style: bool) -> Config:
    options: dict[str, Any] = {
        "retries": {"max_attempts": 3, "mode": "standard"},
        "connect_timeout": 5,
        "read_timeout": 30,
    }
    if path_style:
        options["s3"] = {"addressing_style": "path"}
    if endpoint_url:
        options["request_checksum_calculation"] = "when_required"
        options["response_checksum_validation"] = "when_required"
    return Config(**options)


def _client_kwargs(options: S3Options) -> dict[str, Any]:
    endpoint_url = options.get("endpoint_url")
    region = options.get("region")
    kwargs: dict[str, Any] = {"config": _config(endpoint_url, options.get("path_style", False))}
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    if region:
        kwargs["region_name"] = region
    elif endpoint_url:
        kwargs["region_name"] = "us-east-1"
    if options.get("access_key") is not None:
        kwargs["aws_access_key_id"] = options["access_key"]
    if options.get("secret_key") is not None:
        kwargs["aws_secret_access_key"] = options["secret_key"]
    return kwargs


def _info(item: dict[str, Any]) -> ObjectInfo:
    return ObjectInfo(item["Key"], int(item["Size"]), str(item.get("ETag", "")))


def _range_header(start: int, end_inclusive: int) -> str:
    return f"bytes={start}-{end_inclusive}"


def _is_invalid_range(exc: Exception) -> bool:
    return isinstance(exc, ClientError) and (
        exc.response.get("Error", {}).get("Code") == "InvalidRange"
        or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 416
    )


class S3Store:
    """``ObjectStore`` on S3 through aioboto3; one client, opened on first use."""

    def __init__(self, bucket: str, **options: Unpack[S3Options]) -> None:
        self.bucket = bucket
        self._kwargs = _client_kwargs(options)
        self._session = aioboto3.Session()
        self._client_cm: Any = None
        self._client: Any = None
        self._lock = asyncio.Lock()

    async def _s3(self) -> Any:
        if self._client is None:
            async with self._lock:
                if self._client is None:
                    cm = self._session.client("s3", **self._kwargs)
                    self._client = await cm.__aenter__()
                    self._client_cm = cm
        return self._client

    async def _put(self, key: str, data: bytes, **conditions: str) -> str:
        s3 = await self._s3()
        try:
            md5 = await asyncio.to_thread(content_md5, data)  # a segment: not on the event loop
            response = await s3.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentMD5=md5, **conditions
            )
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, key, e) from e
        return str(response["ETag"])

    async def put(self, key: str, data: bytes) -> str:
        return await self._put(key, data)

    async def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        return await self._put(key, data, IfMatch=etag)

    async def put_if_absent(self, key: str, data: bytes) -> str:
        return await self._put(key, data, IfNoneMatch="*")

    async def get(self, key: str) -> tuple[bytes, str]:
        s3 = await self._s3()
        try:
            response = await s3.get_object(Bucket=self.bucket, Key=key)
            async with response["Body"] as body:
                data = await body.read()
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, key, e) from e
        return bytes(data), str(response["ETag"])

    async def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        if end_inclusive < start:
            return b""
        s3 = await self._s3()
        try:
            response = await s3.get_object(
                Bucket=self.bucket, Key=key, Range=_range_header(start, end_inclusive)
            )
            async with response["Body"] as body:
                return bytes(await body.read())
        except (ClientError, BotoCoreError) as e:
            if _is_invalid_range(e):
                return b""
            raise translate_error(self.bucket, key, e) from e

    async def head(self, key: str) -> ObjectInfo | None:
        s3 = await self._s3()
        try:
            response = await s3.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as e:
            raise_unless_not_found(self.bucket, key, e)
            return None
        return ObjectInfo(key, int(response["ContentLength"]), str(response["ETag"]))

    async def list(self, prefix: str) -> list[ObjectInfo]:
        s3 = await self._s3()
        out: list[ObjectInfo] = []
        try:
            paginator = s3.get_paginator("list_objects_v2")
            async for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                out.extend(_info(item) for item in page.get("Contents", []))
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, prefix, e) from e
        return sorted(out)

    async def delete(self, key: str) -> None:
        s3 = await self._s3()
        try:
            await s3.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as e:
            raise_unless_not_found(self.bucket, key, e)

    async def delete_many(self, keys: Iterable[str]) -> None:
        # One DELETE per key, a few at a time: DeleteObjects needs Content-MD5, which not every
        # S3-compatible server and boto combination agrees on.
        pending = list(keys)
        semaphore = asyncio.Semaphore(16)

        async def _one(key: str) -> None:
            async with semaphore:
                await self.delete(key)

        await asyncio.gather(*(_one(k) for k in pending))

    async def close(self) -> None:
        cm, self._client_cm, self._client = self._client_cm, None, None
        if cm is not None:
            await cm.__aexit__(None, None, None)


class SyncS3Store:
    """``SyncObjectStore`` on S3 through boto3 (thread-safe: boto3 clients are)."""

    def __init__(self, bucket: str, **options: Unpack[S3Options]) -> None:
        self.bucket = bucket
        kwargs = _client_kwargs(options)
        self._s3: Any = boto3.session.Session().client("s3", **kwargs)

    def _put(self, key: str, data: bytes, **conditions: str) -> str:
        try:
            response = self._s3.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentMD5=content_md5(data), **conditions
            )
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, key, e) from e
        return str(response["ETag"])

    def put(self, key: str, data: bytes) -> str:
        return self._put(key, data)

    def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        return self._put(key, data, IfMatch=etag)

    def put_if_absent(self, key: str, data: bytes) -> str:
        return self._put(key, data, IfNoneMatch="*")

    def get(self, key: str) -> tuple[bytes, str]:
        try:
            response = self._s3.get_object(Bucket=self.bucket, Key=key)
            data = response["Body"].read()
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, key, e) from e
        return bytes(data), str(response["ETag"])

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        if end_inclusive < start:
            return b""
        try:
            response = self._s3.get_object(
                Bucket=self.bucket, Key=key, Range=_range_header(start, end_inclusive)
            )
            return bytes(response["Body"].read())
        except (ClientError, BotoCoreError) as e:
            if _is_invalid_range(e):
                return b""
            raise translate_error(self.bucket, key, e) from e

    def head(self, key: str) -> ObjectInfo | None:
        try:
            response = self._s3.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as e:
            raise_unless_not_found(self.bucket, key, e)
            return None
        return ObjectInfo(key, int(response["ContentLength"]), str(response["ETag"]))

    def list(self, prefix: str) -> list[ObjectInfo]:
        out: list[ObjectInfo] = []
        try:
            paginator = self._s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                out.extend(_info(item) for item in page.get("Contents", []))
        except (ClientError, BotoCoreError) as e:
            raise translate_error(self.bucket, prefix, e) from e
        return sorted(out)

    def delete(self, key: str) -> None:
        try:
            self._s3.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as e:
            raise_unless_not_found(self.bucket, key, e)

    def delete_many(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.delete(key)

    def close(self) -> None:
        self._s3.close()
