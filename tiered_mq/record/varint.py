"""Kafka varints: zigzag-encoded base-128 groups, least significant first (protobuf sint64).

Used for every length and delta inside a v2 record. A varint takes at most 10 bytes; a longer
run of continuation bits raises CorruptRecordError. ``ZIGZAG`` maps every unsigned value that
fits in two bytes (below 2**14) to its signed value: the record decoder's inline fast path.
"""

from __future__ import annotations

from typing import Final

from tiered_mq.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

_MAX_VARINT_SHIFT: Final = 63


def zigzag_encode(value: int) -> int:
    """Map a signed 64-bit integer to an unsigned one (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...)."""
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def encode_unsigned_varint(value: int) -> bytes:
    """Kafka's unsigned varint (``ByteUtils.writeUnsignedVarint``) of ``value >= 0``: base-128
    groups, least significant first, the high bit set on every byte but the last. The caller
    checks the sign (a negative value raises ValueError from ``bytearray.append``)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Encoded forms of the first 2**14 zigzag values (one or two bytes): the common lengths and deltas.
ZIGZAG: Final = [(z >> 1) ^ -(z & 1) for z in range(1 << 14)]
_SMALL_VARINTS: Final = [encode_unsigned_varint(z) for z in range(1 << 14)]


def encode_varint(value: int) -> bytes:
    """Zigzag varint (Kafka's varint and varlong) of a signed integer."""
    z = (value << 1) ^ (value >> 63)
    if z < 16384:
        return _SMALL_VARINTS[z]
    return encode_unsigned_varint(z)


def size_of_varint(value: int) -> int:
    z = (value << 1) ^ (value >> 63)
    size = 1
    while z >= 0x80:
        z >>= 7
        size += 1
    return size


def varint_tail(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """Finish an unsigned varint whose first byte ``first`` (>= 0x80) was read before ``pos``."""
    result = first & 0x7F
    shift = 7
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > _MAX_VARINT_SHIFT:
            raise CorruptRecordError(f"varint longer than 10 bytes at {pos}")


def varint32_tail(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """:func:`varint_tail` for Kafka's 32-bit varints (record lengths, offset deltas, key,
    value and header lengths, header counts): at most 5 bytes and below 2**32 unsigned, as
    Java's ``ByteUtils.readVarint`` reads them; else CorruptRecordError (a Java reader fails on
    a longer one and would take a larger one for another value)."""
    z, end = varint_tail(data, pos, first)
    if end - pos > 4 or z >> 32:
        raise CorruptRecordError(f"32-bit varint of {end - pos + 1} bytes (value {z}) at {pos - 1}")
    return z, end


def decode_varint(data: Buffer, pos: int = 0) -> tuple[int, int]:
    """Decode the zigzag varint at ``pos``: ``(value, next position)``."""
    raw = bytes(data[pos : pos + 10])
    try:
        b = raw[0]
        z, used = (b, 1) if b < 0x80 else varint_tail(raw, 1, b)
    except IndexError:
        raise CorruptRecordError(f"truncated varint at {pos}") from None
    return (z >> 1) ^ -(z & 1), pos + used
