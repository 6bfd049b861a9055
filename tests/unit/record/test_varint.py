"""Varints against kafka-python's implementation, and their bounds."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.util import decode_varint as kp_decode_varint
from kafka.record.util import encode_varint as kp_encode_varint

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.varint import (
    ZIGZAG,
    decode_varint,
    encode_varint,
    size_of_varint,
    zigzag_decode,
    zigzag_encode,
)

EDGES = [0, 1, -1, 63, -64, 64, 8191, -8192, 8192, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]


def _kp_bytes(value: int) -> bytes:
    out = bytearray()
    kp_encode_varint(value, out.append)
    return bytes(out)


@pytest.mark.parametrize("value", EDGES)
def test_matches_kafka_python(value: int) -> None:
    expected = _kp_bytes(value)
    assert encode_varint(value) == expected
    assert size_of_varint(value) == len(expected)
    assert decode_varint(b"\xff" + expected, 1) == (value, 1 + len(expected))
    assert kp_decode_varint(expected, 0) == (value, len(expected))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_round_trip(value: int) -> None:
    encoded = encode_varint(value)
    assert encoded == _kp_bytes(value)
    assert decode_varint(encoded) == (value, len(encoded))
    assert zigzag_decode(zigzag_encode(value)) == value


def test_zigzag_table_covers_two_byte_values() -> None:
    assert len(ZIGZAG) == 1 << 14
    assert ZIGZAG[:5] == [0, -1, 1, -2, 2]
    assert all(ZIGZAG[z] == zigzag_decode(z) for z in range(0, 1 << 14, 97))


def test_truncated_and_overlong() -> None:
    with pytest.raises(CorruptRecordError, match="truncated varint"):
        decode_varint(b"\x80\x80")
    with pytest.raises(CorruptRecordError, match="truncated varint"):
        decode_varint(b"")
    with pytest.raises(CorruptRecordError, match="longer than 10"):
        decode_varint(b"\xff" * 12)
