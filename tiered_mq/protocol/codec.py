"""Requests and responses between frames and plain dicts (no I/O).

    decode_request(header, body)      body = frame[body_offset:]; returns a dict
    encode_response(header, body)     returns chunks: int32 size + response header + body
    encode_request(...) / decode_response(...)   the client side, for tests and followers
    api_versions_fallback(corr_id)    the v0 UNSUPPORTED_VERSION answer to ApiVersions
    classify(header)                  SUPPORTED / UNSUPPORTED_VERSION / UNKNOWN_API

Dicts use the Kafka JSON spec field names in snake_case; nested arrays are lists of dicts.
A decoded request holds every declared field (those not on the wire at its version hold their
default); a response dict may omit any field (it takes its default) and may hold keys the
version does not carry (ignored), so a handler can fill one dict for every version.
See ``schema.py`` and the declarations in ``messages/``.

Readers and writers are compiled once per (api, version, direction) on first use and cached.

Errors: an unknown api key or version raises UnsupportedVersionError; malformed bytes raise
InvalidRequestError (never IndexError or struct.error). Trailing bytes after a request body
are ignored, as newer clients may append tagged data we do not know.

Unsupported requests (the broker's policy, as Kafka's): an ApiVersions request of any version
outside the range is answered with :func:`api_versions_fallback` without parsing its body;
any other unknown api key or unsupported version closes the connection (clients only send
versions they were told about, so this is a broken or hostile client).
"""

from __future__ import annotations

import functools
import struct
from enum import Enum
from typing import Any, Final

from tiered_mq.errors import InvalidRequestError, UnsupportedVersionError
from tiered_mq.protocol import decoder, encoder, fetch_codec, metadata_codec, produce_codec, wire
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey
from tiered_mq.protocol.decoder import Reader
from tiered_mq.protocol.encoder import Chunk, WriteFn, Writer, chunk_size
from tiered_mq.protocol.header import (
    RequestHeader,
    decode_response_header,
    encode_request_header,
    encode_response_header,
)
from tiered_mq.protocol.messages import REQUESTS, RESPONSES
from tiered_mq.protocol.schema import Message
from tiered_mq.record.file_records import FileRegion

_DECODE_ERRORS: Final = (struct.error, IndexError, ValueError, OverflowError, TypeError)
# read once: an Enum class attribute goes through EnumType.__getattr__ (~70 ns on Python 3.11)
_PRODUCE: Final = ApiKey.PRODUCE
_FETCH: Final = ApiKey.FETCH
_METADATA: Final = ApiKey.METADATA
_API_VERSIONS: Final = ApiKey.API_VERSIONS


class Support(Enum):
    SUPPORTED = "supported"
    UNSUPPORTED_VERSION = "unsupported_version"  # known api key, version out of range
    UNKNOWN_API = "unknown_api"


def classify(header: RequestHeader) -> Support:
    """Whether the body of this request can be decoded (see the module docstring)."""
    rng = SUPPORTED.get(header.api_key)
    if rng is None or header.api_key not in REQUESTS:
        return Support.UNKNOWN_API
    if not rng[0] <= header.api_version <= rng[1]:
        return Support.UNSUPPORTED_VERSION
    return Support.SUPPORTED


def _message(table: dict[int, Message], api_key: int, version: int) -> Message:
    msg = table.get(api_key)
    rng = SUPPORTED.get(api_key)
    if msg is None or rng is None:
        raise UnsupportedVersionError(f"unknown api key {api_key}")
    if not (rng[0] <= version <= rng[1] and version in msg.valid):
        raise UnsupportedVersionError(f"{msg.name} v{version} (supported {rng[0]}-{rng[1]})")
    return msg


# Each (api key, version, request or response) compiles once, at its first use; a version
# _message refuses raises every time (exceptions are not cached).


@functools.cache
def _reader(api_key: int, version: int, request: bool) -> Reader:
    msg = _message(REQUESTS if request else RESPONSES, api_key, version)
    return decoder.message_reader(msg.fields, version, version in msg.flexible)


@functools.cache
def _writer(api_key: int, version: int, request: bool) -> WriteFn:
    msg = _message(REQUESTS if request else RESPONSES, api_key, version)
    return encoder.message_writer(msg.fields, version, version in msg.flexible)


def _decode(rd: Reader, buf: memoryview, what: str) -> dict[str, Any]:
    try:
        value, _end = rd(buf, 0)
    except _DECODE_ERRORS as e:  # defence in depth: the readers check bounds themselves
        raise InvalidRequestError(f"malformed {what}: {e!r}") from e
    result: dict[str, Any] = value
    return result


def decode_request(header: RequestHeader, body: memoryview) -> dict[str, Any]:
    """Decode a request body; ``records`` fields are zero-copy slices of ``body``."""
    rd = _reader(header.api_key, header.api_version, True)
    if header.api_key == _PRODUCE and _produce_fast(header.api_version):
        fast = produce_codec.read_request(body)
        if fast is not None:
            return fast
    return _decode(rd, body, f"request {header.api_key} v{header.api_version}")


def _produce_fast(version: int) -> bool:
    """Whether Produce ``version`` has the hand-written codec (produce_codec.py)."""
    return produce_codec.MIN_VERSION <= version <= produce_codec.MAX_VERSION


def _fetch_fast(version: int) -> bool:
    """Whether Fetch ``version`` has the hand-written response writer (fetch_codec.py)."""
    return fetch_codec.MIN_VERSION <= version <= fetch_codec.MAX_VERSION


def encode_response(header: RequestHeader, body: dict[str, Any]) -> list[Chunk]:
    """Chunks of the whole response frame: int32 size, response header, body.

    An ApiVersions response with a non-zero error_code is encoded with the v0 body whatever
    the request version: clients (librdkafka, Kafka's Java client, kafka-python) parse an
    erroneous ApiVersions response as v0.
    """
    version = header.api_version
    if header.api_key == _API_VERSIONS and body.get("error_code", 0) != 0:
        version = 0
    wr = _writer(header.api_key, version, False)
    response_header = encode_response_header(
        header.api_key, header.api_version, header.correlation_id
    )
    if header.api_key == _PRODUCE and _produce_fast(version):
        frame = produce_codec.write_response(version, response_header, body)
        if frame is not None:
            return [frame]
    if header.api_key == _FETCH and _fetch_fast(version):
        chunks = fetch_codec.write_response(version, response_header, body)
        if chunks is not None:
            return chunks
    if header.api_key == _METADATA and version <= metadata_codec.MAX_VERSION:
        frame = metadata_codec.write_response(version, response_header, body)
        if frame is not None:
            return [frame]
    w = Writer()
    w.buf += b"\x00\x00\x00\x00"
    w.buf += response_header
    wr(w, body)
    chunks = w.finish()
    first = chunks[0]
    assert isinstance(first, bytearray)
    struct.pack_into(">i", first, 0, sum(chunk_size(c) for c in chunks) - 4)
    return chunks


def encode_request(
    api_key: int,
    version: int,
    correlation_id: int,
    client_id: str | None,
    body: dict[str, Any],
) -> bytes:
    """A whole request frame (size prefix included) as one bytes object."""
    wr = _writer(api_key, version, True)
    w = Writer()
    w.buf += encode_request_header(RequestHeader(api_key, version, correlation_id, client_id))
    wr(w, body)
    payload = b"".join(c.read() if isinstance(c, FileRegion) else bytes(c) for c in w.finish())
    return wire.I32.pack(len(payload)) + payload


def decode_response(api_key: int, version: int, payload: bytes | memoryview) -> dict[str, Any]:
    """Decode a response payload (after the size prefix, starting at the correlation id)."""
    buf = memoryview(payload)
    _reader(api_key, version, False)  # unknown api/version -> UnsupportedVersionError
    try:
        _corr, pos = decode_response_header(api_key, version, buf)
        if api_key == ApiKey.API_VERSIONS and wire.I16.unpack_from(buf, pos)[0] != 0:
            version = 0  # an erroneous ApiVersions response is always v0 (see encode_response)
    except _DECODE_ERRORS as e:
        raise InvalidRequestError(f"malformed response header: {e!r}") from e
    return _decode(_reader(api_key, version, False), buf[pos:], f"response {api_key} v{version}")


def response_correlation_id(payload: bytes | memoryview) -> int:
    """The correlation id at the start of a response payload."""
    if len(payload) < 4:
        raise InvalidRequestError("response shorter than its header")
    (corr,) = wire.I32.unpack_from(payload, 0)
    result: int = corr
    return result


def api_versions_fallback(correlation_id: int) -> bytes:
    """The ApiVersions v0 answer to an ApiVersions request of an unsupported version.

    Response header v0 (correlation id only), then the v0 body: error_code=35
    (UNSUPPORTED_VERSION), api_keys=[{18, min, max}] so the client retries with a version we
    know; no throttle_time_ms (v0 has none). The request body is never parsed.
    """
    lo, hi = SUPPORTED[ApiKey.API_VERSIONS]
    body = struct.pack(">ihihhh", correlation_id, UnsupportedVersionError.errno, 1, 18, lo, hi)
    return wire.I32.pack(len(body)) + body
