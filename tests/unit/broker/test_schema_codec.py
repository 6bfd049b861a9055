"""The classic schema primitives used by the internal topics' records."""

from __future__ import annotations

import struct

import pytest

from tiered_mq.broker.schema_codec import SchemaReader, write_bytes, write_str


def test_fields_round_trip_in_order() -> None:
    data = (
        struct.pack(">hiq", 3, -7, 2**40)
        + write_str("grüße")
        + write_str(None)
        + write_bytes(b"\x00\x01")
    )
    r = SchemaReader(data)
    assert (r.i16(), r.i32(), r.i64()) == (3, -7, 2**40)
    assert r.str() == "grüße"
    assert r.nullable_str() is None
    assert r.bytes() == b"\x00\x01"
    assert r.pos == len(data)


@pytest.mark.parametrize(
    "data, read",
    [
        (b"\x00", SchemaReader.i16),
        (struct.pack(">h", 10) + b"short", SchemaReader.str),
        (struct.pack(">h", -1), SchemaReader.str),
        (struct.pack(">h", 2) + b"\xff\xfe", SchemaReader.str),
        (struct.pack(">i", 2**31 - 1), SchemaReader.bytes),
        (struct.pack(">i", -5), SchemaReader.bytes),
    ],
    ids=["truncated-int", "truncated-string", "null-string", "not-utf8", "huge-bytes", "bad-len"],
)
def test_malformed_fields_raise_value_error(data: bytes, read: object) -> None:
    with pytest.raises(ValueError):
        read(SchemaReader(data))  # type: ignore[operator]


def test_null_bytes_read_as_empty() -> None:
    assert SchemaReader(struct.pack(">i", -1)).bytes() == b""
