"""Kafka's classic (non-flexible) schema encoding, for the records of the internal topics
(``__consumer_offsets``, ``__transaction_state``) and the consumer protocol's metadata.

The primitives are the wire protocol's (:mod:`tiered_mq.protocol.wire`): big-endian integers,
a string as an int16 length (-1 = null) and UTF-8, bytes as an int32 length (-1 = null, read
here as empty). :class:`SchemaReader` raises ValueError (a stored record that does not decode),
never the wire's INVALID_REQUEST, struct.error or IndexError.
"""

from __future__ import annotations

import struct

from tiered_mq.protocol import wire


def write_str(s: str | None) -> bytes:
    return wire.write_string(s, compact=False)


def write_bytes(b: bytes) -> bytes:
    return wire.write_length(len(b), compact=False, wide=True) + b


class SchemaReader:
    """Reads fields in order from ``data``; ``pos`` is the next unread byte."""

    __slots__ = ("buf", "pos")

    def __init__(self, data: bytes) -> None:
        self.buf = memoryview(data)
        self.pos = 0

    def take(self, fmt: str) -> tuple[int, ...]:
        """The fixed-width integers of struct format ``fmt`` at the current position."""
        return self._unpack(struct.Struct(fmt))

    def _unpack(self, st: struct.Struct) -> tuple[int, ...]:
        if self.pos + st.size > len(self.buf):
            raise ValueError(f"record truncated at {self.pos}")
        out = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return out

    def i16(self) -> int:
        return int(self._unpack(wire.I16)[0])

    def i32(self) -> int:
        return int(self._unpack(wire.I32)[0])

    def i64(self) -> int:
        return int(self._unpack(wire.I64)[0])

    def nullable_str(self) -> str | None:
        try:
            s, self.pos = wire.read_string(self.buf, self.pos, compact=False)
        except wire.MalformedError as e:
            raise ValueError(str(e)) from None
        return s

    def str(self) -> str:
        s = self.nullable_str()
        if s is None:
            raise ValueError(f"null string at {self.pos}")
        return s

    def bytes(self) -> bytes:
        try:
            b, self.pos = wire.read_bytes(self.buf, self.pos, compact=False)
        except wire.MalformedError as e:
            raise ValueError(str(e)) from None
        return b"" if b is None else bytes(b)
