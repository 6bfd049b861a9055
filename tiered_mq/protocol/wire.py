"""Primitive wire encodings shared by the compiler and the headers (big-endian throughout).

    int8/16/32/64, uint16, float64, bool   fixed width, struct codes b h i q H d ?
    string           int16 length + UTF-8; -1 = null (nullable versions only)
    bytes / records  int32 length + bytes; -1 = null
    array            int32 count + elements; -1 = null
    compact string / bytes / array (flexible versions)
                     unsigned varint of length+1; 0 = null
    tagged fields    uvarint count, then per field: uvarint tag, uvarint size, size bytes
    uuid             16 bytes

Readers take ``(buf, pos)`` and return ``(value, new_pos)``. Every length is checked against
the buffer before any slice or allocation, so a malformed frame raises
:class:`~tiered_mq.errors.InvalidRequestError` (never IndexError or struct.error) and a
declared length of 2**31 allocates nothing.
"""

from __future__ import annotations

import struct
from typing import Final

from tiered_mq.errors import InvalidRequestError
from tiered_mq.record.varint import encode_unsigned_varint

I8: Final = struct.Struct(">b")
I16: Final = struct.Struct(">h")
I32: Final = struct.Struct(">i")
I64: Final = struct.Struct(">q")

MAX_UVARINT_BYTES: Final = 5  # lengths and tags are 31-bit


# The bytes do not parse as the declared schema (INVALID_REQUEST on the wire).
MalformedError: Final = InvalidRequestError


def short(what: str, pos: int, need: int, have: int) -> Exception:
    return MalformedError(f"{what} at {pos}: needs {need} bytes, {have} left")


def read_uvarint(buf: memoryview, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint of at most 5 bytes (a 32-bit value)."""
    result = 0
    shift = 0
    end = len(buf)
    for _ in range(MAX_UVARINT_BYTES):
        if pos >= end:
            raise short("varint", pos, 1, 0)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            if result > 0xFFFFFFFF:
                raise MalformedError(f"varint at {pos} exceeds 32 bits")
            return result, pos
        shift += 7
    raise MalformedError(f"varint at {pos} longer than {MAX_UVARINT_BYTES} bytes")


def uvarint(value: int) -> bytes:
    """Encode an unsigned varint."""
    if value < 0:
        raise ValueError(f"uvarint of negative value {value}")
    if value < 0x80:
        return bytes((value,))
    return encode_unsigned_varint(value)


def read_length(buf: memoryview, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    """A length prefix: -1 means null. ``wide`` selects int32 over int16 when not compact."""
    if compact:
        n, pos = read_uvarint(buf, pos)
        return n - 1, pos
    st = I32 if wide else I16
    if pos + st.size > len(buf):
        raise short("length", pos, st.size, len(buf) - pos)
    (n,) = st.unpack_from(buf, pos)
    if n < -1:
        raise MalformedError(f"negative length {n} at {pos}")
    return n, pos + st.size


def write_length(n: int, compact: bool, wide: bool) -> bytes:
    """Encode a length prefix; ``n = -1`` is null."""
    if compact:
        return uvarint(n + 1)
    if wide:
        return I32.pack(n)
    if n > 0x7FFF:
        raise ValueError(f"string of {n} bytes exceeds int16 length")
    return I16.pack(n)


def read_string(buf: memoryview, pos: int, compact: bool) -> tuple[str | None, int]:
    """A (compact) nullable string; the caller rejects None where not nullable."""
    n, pos = read_length(buf, pos, compact, wide=False)
    if n < 0:
        return None, pos
    end = pos + n
    if end > len(buf):
        raise short("string", pos, n, len(buf) - pos)
    try:
        return str(buf[pos:end], "utf-8"), end
    except UnicodeDecodeError as e:
        raise MalformedError(f"string at {pos} is not UTF-8") from e


def write_string(value: str | None, compact: bool) -> bytes:
    if value is None:
        return write_length(-1, compact, wide=False)
    b = value.encode("utf-8")
    return write_length(len(b), compact, wide=False) + b


def read_bytes(buf: memoryview, pos: int, compact: bool) -> tuple[memoryview | None, int]:
    """A (compact) nullable bytes or records field as a zero-copy slice of ``buf``."""
    n, pos = read_length(buf, pos, compact, wide=True)
    if n < 0:
        return None, pos
    end = pos + n
    if end > len(buf):
        raise short("bytes", pos, n, len(buf) - pos)
    return buf[pos:end], end


def skip_tagged_fields(buf: memoryview, pos: int) -> int:
    """Skip a tagged-field section whose tags are all unknown to the reader."""
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        if pos + size > len(buf):
            raise short("tagged field", pos, size, len(buf) - pos)
        pos += size
    return pos
