"""Every API at every version, both directions: encode -> decode and decode -> encode."""

from __future__ import annotations

import random

import pytest

from tests.unit.protocol.samples import all_versions, plain, sample
from tiered_mq.protocol import codec
from tiered_mq.protocol.header import RequestHeader, decode_request_header
from tiered_mq.protocol.messages import REQUESTS, RESPONSES

REQUEST_CASES = all_versions(REQUESTS)
RESPONSE_CASES = all_versions(RESPONSES)


def _decode_frame(frame: bytes) -> tuple[RequestHeader, dict]:
    view = memoryview(frame)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    header, offset = decode_request_header(view[4:])
    return header, codec.decode_request(header, view[4 + offset :])


def _join(chunks: list) -> bytes:
    return b"".join(c.read() if hasattr(c, "read") else bytes(c) for c in chunks)


@pytest.mark.parametrize(("api_key", "version"), REQUEST_CASES)
def test_request_roundtrip(api_key: int, version: int) -> None:
    rng = random.Random(api_key * 100 + version)
    for i in range(25):
        body = sample(REQUESTS[api_key], version, rng)
        frame = codec.encode_request(api_key, version, i, "client-é", body)
        header, decoded = _decode_frame(frame)
        assert header == RequestHeader(api_key, version, i, "client-é")
        assert plain(decoded) == body
        # decode -> encode gives the same bytes back
        assert codec.encode_request(api_key, version, i, "client-é", decoded) == frame


@pytest.mark.parametrize(("api_key", "version"), RESPONSE_CASES)
def test_response_roundtrip(api_key: int, version: int) -> None:
    rng = random.Random(api_key * 100 + version + 7)
    for i in range(25):
        body = sample(RESPONSES[api_key], version, rng)
        header = RequestHeader(api_key, version, i, None)
        frame = _join(codec.encode_response(header, body))
        assert int.from_bytes(frame[:4], "big") == len(frame) - 4
        assert codec.response_correlation_id(frame[4:]) == i
        decoded = codec.decode_response(api_key, version, frame[4:])
        assert plain(decoded) == body
        assert _join(codec.encode_response(header, decoded)) == frame


@pytest.mark.parametrize(("api_key", "version"), REQUEST_CASES)
def test_missing_fields_take_defaults(api_key: int, version: int) -> None:
    """An empty dict encodes (every field at its default) and decodes to the defaults."""
    frame = codec.encode_request(api_key, version, 1, None, {})
    _, decoded = _decode_frame(frame)
    assert plain(decoded) == REQUESTS[api_key].defaults(version)
    resp = _join(codec.encode_response(RequestHeader(api_key, version, 1, None), {}))
    assert plain(codec.decode_response(api_key, version, resp[4:])) == plain(
        RESPONSES[api_key].defaults(version)
    )
