"""Request and response headers.

Request header (after the int32 frame size, which the server strips)::

    v1: api_key i16 | api_version i16 | correlation_id i32 | client_id nullable string (i16 length)
    v2: v1 + tagged fields (client_id keeps its int16 length even in flexible versions)

v2 is used by flexible request versions (here: ApiVersions v3+, IncrementalAlterConfigs v1+).
For an api key or version the codec does not support, the header is read as v1 (its tagged
fields, if any, are not read): the fixed part and client_id are the same in every version, and
the body is never parsed in that case, so the ApiVersions fallback needs nothing more.

Response header::

    v0: correlation_id i32
    v1: v0 + tagged fields (flexible versions), except ApiVersions which always uses v0

A frame too short for its header raises InvalidRequestError (the connection is then closed:
no correlation id can be trusted).
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Final, NamedTuple

from tiered_mq.protocol import wire
from tiered_mq.protocol.api_versions import ApiKey, is_supported
from tiered_mq.protocol.messages import REQUESTS, RESPONSES

_FIXED_PART: Final = struct.Struct(">hhi")  # api_key, api_version, correlation_id
_FIXED: Final = _FIXED_PART.size


class RequestHeader(NamedTuple):
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def request_is_flexible(api_key: int, api_version: int) -> bool:
    msg = REQUESTS.get(api_key)
    return msg is not None and api_version in msg.flexible


@lru_cache(maxsize=1024)  # (key, version) pairs come from clients: bounded
def _request_header_is_v2(api_key: int, api_version: int) -> bool:
    """Whether the request header has tagged fields (a supported, flexible version)."""
    return is_supported(api_key, api_version) and request_is_flexible(api_key, api_version)


@lru_cache(maxsize=1024)
def response_header_version(api_key: int, api_version: int) -> int:
    """0 or 1: ApiVersions always answers with header v0."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    msg = RESPONSES.get(api_key)
    return 1 if msg is not None and api_version in msg.flexible else 0


def decode_request_header(frame: memoryview) -> tuple[RequestHeader, int]:
    """Decode the header at the start of ``frame``; returns it and the offset of the body."""
    if len(frame) < _FIXED:
        raise wire.short("request header", 0, _FIXED, len(frame))
    api_key, api_version, correlation_id = _FIXED_PART.unpack_from(frame, 0)
    client_id, pos = wire.read_string(frame, _FIXED, compact=False)
    if _request_header_is_v2(api_key, api_version):
        pos = wire.skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def encode_request_header(header: RequestHeader) -> bytes:
    out = (
        wire.I16.pack(header.api_key)
        + wire.I16.pack(header.api_version)
        + wire.I32.pack(header.correlation_id)
        + wire.write_string(header.client_id, compact=False)
    )
    if request_is_flexible(header.api_key, header.api_version):
        out += b"\x00"  # no tagged fields
    return out


def encode_response_header(api_key: int, api_version: int, correlation_id: int) -> bytes:
    out = wire.I32.pack(correlation_id)
    if response_header_version(api_key, api_version) == 1:
        out += b"\x00"
    return out


def decode_response_header(api_key: int, api_version: int, payload: memoryview) -> tuple[int, int]:
    """(correlation_id, body offset) of a response payload (after the size prefix)."""
    if len(payload) < wire.I32.size:
        raise wire.short("response header", 0, wire.I32.size, len(payload))
    (correlation_id,) = wire.I32.unpack_from(payload, 0)
    pos = wire.I32.size
    if response_header_version(api_key, api_version) == 1:
        pos = wire.skip_tagged_fields(payload, pos)
    return correlation_id, pos
