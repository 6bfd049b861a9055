"""Fuzz the decoders: random bytes and mutated valid frames raise only typed Kafka errors.

Any input must either decode or raise a :class:`tiered_mq.errors.KafkaError` (in practice
InvalidRequestError); never IndexError, struct.error, UnicodeDecodeError, MemoryError, and never
hang: every declared length is checked against the bytes left before anything is allocated.
"""

from __future__ import annotations

import random
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.protocol.samples import all_versions, sample
from tiered_mq.errors import KafkaError
from tiered_mq.protocol import codec
from tiered_mq.protocol.header import RequestHeader, decode_request_header
from tiered_mq.protocol.messages import REQUESTS, RESPONSES

REQUEST_CASES = all_versions(REQUESTS)
RESPONSE_CASES = all_versions(RESPONSES)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _valid_body(api_key: int, version: int, seed: int) -> bytes:
    body = sample(REQUESTS[api_key], version, random.Random(seed))
    frame = codec.encode_request(api_key, version, 1, "fuzz", body)
    _, offset = decode_request_header(memoryview(frame)[4:])
    return frame[4 + offset :]


def _decode_or_typed_error(api_key: int, version: int, data: bytes) -> None:
    try:
        result = codec.decode_request(RequestHeader(api_key, version, 1, None), memoryview(data))
    except KafkaError:
        return
    assert isinstance(result, dict)


# A mutation: (kind, position fraction, payload)
_MUTATION = st.tuples(
    st.sampled_from(["flip", "truncate", "insert", "big_int32", "big_int16", "minus"]),
    st.floats(min_value=0.0, max_value=1.0),
    st.binary(min_size=1, max_size=8),
)


def _mutate(data: bytes, kind: str, where: float, payload: bytes) -> bytes:
    pos = min(int(where * len(data)), max(len(data) - 1, 0))
    if kind == "flip" and data:
        return data[:pos] + bytes([data[pos] ^ (payload[0] or 0xFF)]) + data[pos + 1 :]
    if kind == "truncate":
        return data[:pos]
    if kind == "insert":
        return data[:pos] + payload + data[pos:]
    if kind == "big_int32":
        return data[:pos] + struct.pack(">i", 2**31 - 1) + data[pos + 4 :]
    if kind == "big_int16":
        return data[:pos] + struct.pack(">h", 2**15 - 1) + data[pos + 2 :]
    return data[:pos] + struct.pack(">i", -(2**31)) + data[pos + 4 :]


@FUZZ
@given(st.sampled_from(REQUEST_CASES), st.binary(max_size=300))
def test_random_request_bytes(case: tuple[int, int], data: bytes) -> None:
    _decode_or_typed_error(*case, data)


@FUZZ
@given(
    st.sampled_from(REQUEST_CASES),
    st.integers(0, 2**16),
    st.lists(_MUTATION, min_size=1, max_size=3),
)
def test_mutated_request_frames(
    case: tuple[int, int], seed: int, mutations: list[tuple[str, float, bytes]]
) -> None:
    data = _valid_body(*case, seed)
    for kind, where, payload in mutations:
        data = _mutate(data, kind, where, payload)
    _decode_or_typed_error(*case, data)


@FUZZ
@given(
    st.sampled_from(RESPONSE_CASES),
    st.integers(0, 2**16),
    st.lists(_MUTATION, min_size=1, max_size=3),
)
def test_mutated_responses(
    case: tuple[int, int], seed: int, mutations: list[tuple[str, float, bytes]]
) -> None:
    api_key, version = case
    body = sample(RESPONSES[api_key], version, random.Random(seed))
    chunks = codec.encode_response(RequestHeader(api_key, version, 1, None), body)
    data = b"".join(bytes(c) for c in chunks)[4:]
    for kind, where, payload in mutations:
        data = _mutate(data, kind, where, payload)
    try:
        codec.decode_response(api_key, version, data)
    except KafkaError:
        pass


@FUZZ
@given(st.binary(max_size=64))
def test_random_request_headers(data: bytes) -> None:
    try:
        header, offset = decode_request_header(memoryview(data))
    except KafkaError:
        return
    assert 8 <= offset <= len(data)
    assert isinstance(header.correlation_id, int)
