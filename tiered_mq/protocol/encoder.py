"""Compile a (message, version) declaration into a writer, once.

Writer functions: ``(w: Writer, value) -> None`` append to ``w.buf``. As in the decoder, runs
of consecutive fixed-width fields merge into one precompiled ``struct.Struct.pack``.

Records are kept out of the copy: a ``records`` value that is a ``FileRegion``, a list of
``bytes | memoryview | FileRegion``, or more than ``INLINE_RECORDS_MAX`` bytes closes the
current buffer into ``w.chunks`` and is appended as chunks of its own (the length prefix is the
sum of their sizes), so the server can ``sendfile`` FileRegions. Smaller byte strings are copied
inline (one write instead of two).

A missing key takes the field's default; an explicit None in a field that is not nullable at
this version raises ValueError naming the field (a handler bug, caught in tests); a value of
the wrong type raises ValueError/TypeError likewise.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Final

from tiered_mq.protocol import wire
from tiered_mq.protocol.fixed_runs import run_struct, wire_runs
from tiered_mq.protocol.schema import (
    FIXED_SIZE,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    Primitive,
)
from tiered_mq.record.file_records import FileRegion

Chunk = bytes | bytearray | memoryview | FileRegion
WriteFn = Callable[["Writer", Any], None]

INLINE_RECORDS_MAX: Final = 4096
_ARRAY_COUNT: Final = wire.I32
_NULL_ARRAY_COUNT: Final = wire.I32.pack(-1)


class Writer:
    """An output buffer plus the chunks already closed (records kept out of the copy)."""

    __slots__ = ("buf", "chunks")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.chunks: list[Chunk] = []

    def close_buffer(self) -> None:
        if self.buf:
            self.chunks.append(self.buf)
            self.buf = bytearray()

    def finish(self) -> list[Chunk]:
        self.close_buffer()
        return self.chunks


def chunk_size(c: Chunk) -> int:
    if isinstance(c, FileRegion):
        return c.length
    if isinstance(c, memoryview):
        return c.nbytes
    return len(c)


def _null_error(name: str) -> ValueError:
    return ValueError(f"field {name!r} is not nullable at this version but got None")


def _primitive_writer(t: Primitive, name: str, nullable: bool, flex: bool) -> WriteFn:
    if t.name in FIXED_SIZE:
        st = struct.Struct(">" + t.code)

        def write_fixed(w: Writer, v: Any) -> None:
            try:
                w.buf += st.pack(v)
            except struct.error as e:
                raise ValueError(f"field {name!r}: {e}") from None

        return write_fixed
    if t is UUID:

        def write_uuid(w: Writer, v: Any) -> None:
            raw = v if isinstance(v, bytes | bytearray) else v.bytes
            if len(raw) != 16:
                raise ValueError(f"field {name!r}: uuid of {len(raw)} bytes")
            w.buf += raw

        return write_uuid
    if t is STRING and not flex:
        i16 = wire.I16

        def write_str16(w: Writer, v: Any) -> None:
            if v is None:
                if not nullable:
                    raise _null_error(name)
                w.buf += b"\xff\xff"
                return
            b = v.encode("utf-8")
            if len(b) > 0x7FFF:
                raise ValueError(f"field {name!r}: string of {len(b)} bytes")
            w.buf += i16.pack(len(b))
            w.buf += b

        return write_str16
    if t is STRING:

        def write_str(w: Writer, v: Any) -> None:
            if v is None and not nullable:
                raise _null_error(name)
            w.buf += wire.write_string(v, flex)

        return write_str
    if t is RECORDS:
        return _records_writer(name, nullable, flex)

    def write_bytes(w: Writer, v: Any) -> None:
        if v is None:
            if not nullable:
                raise _null_error(name)
            w.buf += wire.write_length(-1, flex, wide=True)
            return
        w.buf += wire.write_length(len(memoryview(v).cast("B")), flex, wide=True)
        w.buf += v

    return write_bytes


def _records_writer(name: str, nullable: bool, flex: bool) -> WriteFn:
    def write_records(w: Writer, v: Any) -> None:
        if v is None:
            if nullable:
                w.buf += wire.write_length(-1, flex, wide=True)
                return
            v = b""
        if isinstance(v, bytes | bytearray | memoryview):
            n = chunk_size(v)
            w.buf += wire.write_length(n, flex, wide=True)
            if n <= INLINE_RECORDS_MAX:
                w.buf += v
            else:
                w.close_buffer()
                w.chunks.append(v)
            return
        parts: list[Chunk] = [v] if isinstance(v, FileRegion) else list(v)
        total = 0
        for p in parts:
            if not isinstance(p, bytes | bytearray | memoryview | FileRegion):
                raise TypeError(f"field {name!r}: records chunk of type {type(p).__name__}")
            total += chunk_size(p)
        w.buf += wire.write_length(total, flex, wide=True)
        w.close_buffer()
        w.chunks.extend(p for p in parts if chunk_size(p))

    return write_records


def write_array_length(w: Writer, v: Any, name: str, nullable: bool, flex: bool) -> bool:
    """Append array ``v``'s count prefix; False when ``v`` is None (the null count is written).

    The count is an int32, -1 for null (a uvarint of count + 1, 0 for null, in flexible
    versions). None in a field that is not nullable at this version raises ValueError naming
    the field. The prefix is packed here rather than by :func:`wire.write_length` (one call
    less per array: this runs for every array of every response).
    """
    if v is None:
        if not nullable:
            raise _null_error(name)
        w.buf += b"\x00" if flex else _NULL_ARRAY_COUNT
        return False
    w.buf += wire.uvarint(len(v) + 1) if flex else _ARRAY_COUNT.pack(len(v))
    return True


def _array_writer(t: Array, name: str, version: int, nullable: bool, flex: bool) -> WriteFn:
    elem = t.element
    if isinstance(elem, Primitive) and elem.name in FIXED_SIZE:
        code = elem.code

        def write_fixed(w: Writer, v: Any) -> None:
            if not write_array_length(w, v, name, nullable, flex):
                return
            try:
                w.buf += struct.pack(f">{len(v)}{code}", *v)
            except struct.error as e:
                raise ValueError(f"field {name!r}: {e}") from None

        return write_fixed
    if isinstance(elem, Primitive):
        ew = _primitive_writer(elem, name, False, flex)
    else:
        ew = _struct_writer(elem.fields, version, flex)

    def write_array(w: Writer, v: Any) -> None:
        if not write_array_length(w, v, name, nullable, flex):
            return
        for item in v:
            ew(w, item)

    return write_array


def field_writer(fld: Field, version: int, flex: bool) -> WriteFn:
    t = fld.type
    nullable = version in fld.nullable
    if isinstance(t, Primitive):
        return _primitive_writer(t, fld.name, nullable, flex)
    if isinstance(t, Array):
        return _array_writer(t, fld.name, version, nullable, flex)
    sw = _struct_writer(t.fields, version, flex)

    def write_struct(w: Writer, v: Any) -> None:
        sw(w, {} if v is None else v)

    return write_struct


def _struct_writer(fields: tuple[Field, ...], version: int, flex: bool) -> WriteFn:
    # ops: (name, default, writer) for one field; ((name, default) pairs, Struct, None) for a
    # run of fixed-width fields packed at once.
    ops: list[tuple[Any, Any, WriteFn | None]] = []
    for run in wire_runs(fields, version):
        if isinstance(run, tuple):
            pairs = tuple((fld.name, fld.default_at(version)) for fld in run)
            ops.append((pairs, run_struct(run), None))
        else:
            ops.append((run.name, run.default_at(version), field_writer(run, version, flex)))
    tagged = sorted(
        (fld.tag, fld.name, fld.default_at(version), field_writer(fld, version, flex))
        for fld in fields
        if flex and fld.tag is not None and version in fld.versions
    )

    def write_tags(w: Writer, d: dict[str, Any]) -> None:
        entries: list[bytes] = []
        for tag, name, default, fw in tagged:
            v = d.get(name, default)
            if v == default:
                continue
            sub = Writer()
            fw(sub, v)
            data = b"".join(bytes(c) for c in sub.finish() if not isinstance(c, FileRegion))
            entries.append(wire.uvarint(tag) + wire.uvarint(len(data)) + data)
        w.buf += wire.uvarint(len(entries))
        for e in entries:
            w.buf += e

    def write(w: Writer, d: Any) -> None:
        get = d.get
        for key, default, fw in ops:
            if fw is not None:
                fw(w, get(key, default))
                continue
            try:
                w.buf += default.pack(*[get(n, dv) for n, dv in key])
            except struct.error as e:
                raise ValueError(f"fields {[n for n, _ in key]}: {e}") from None
        if flex:
            if tagged:
                write_tags(w, d)
            else:  # no tagged field declared: an empty tag section
                w.buf += b"\x00"

    return write


def message_writer(fields: tuple[Field, ...], version: int, flex: bool) -> WriteFn:
    return _struct_writer(fields, version, flex)
