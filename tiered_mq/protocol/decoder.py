"""Compile a (message, version) declaration into a reader, once (writers: encoder.py).

A struct compiles to a list of ops. Runs of consecutive fixed-width fields (int8..int64,
uint16, float64, bool) merge into one precompiled ``struct.Struct``, so e.g. a Fetch request
partition (partition, fetch_offset, log_start_offset, partition_max_bytes) is one
``unpack_from``; arrays of fixed-width primitives are one ``unpack_from``, and arrays of structs
whose wire fields are all fixed-width are one ``iter_unpack`` with a generated dict builder.
Non-flexible string/bytes lengths are read inline; compact forms go through ``wire``.

Reader: ``(buf: memoryview, pos) -> (value, new_pos)``; structs decode to plain dicts holding
every field of the declaration (fields not on the wire at this version hold their default).
``bytes`` fields decode to ``bytes``; ``records`` fields to a zero-copy ``memoryview`` of ``buf``.
Every length is bounded by the bytes left before anything is allocated: an array whose declared
count cannot fit (count * minimum element size > bytes left) is rejected.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from tiered_mq.protocol import wire
from tiered_mq.protocol.fixed_runs import run_struct, wire_runs
from tiered_mq.protocol.schema import (
    BYTES,
    FIXED_SIZE,
    STRING,
    UUID,
    Array,
    Field,
    Primitive,
    Struct,
)

Reader = Callable[[memoryview, int], tuple[Any, int]]

_ARRAY_COUNT = wire.I32


# ---------------------------------------------------------------- sizes


def _min_size(t: Primitive | Struct | Array, version: int, flex: bool) -> int:
    """Fewest bytes one value of ``t`` can take on the wire."""
    if isinstance(t, Primitive):
        if t.name in FIXED_SIZE or t is UUID:
            return t.size
        return 1 if flex else t.size
    if isinstance(t, Array):
        return 1 if flex else 4
    size = 1 if flex else 0  # tagged-field count
    for fld in t.fields:
        if version in fld.versions and not (flex and fld.tag is not None):
            size += _min_size(fld.type, version, flex)
    return size


# ---------------------------------------------------------------- readers


def _fixed_reader(t: Primitive) -> Reader:
    st = struct.Struct(">" + t.code)
    size = st.size

    def read(buf: memoryview, pos: int) -> tuple[Any, int]:
        if pos + size > len(buf):
            raise wire.short(t.name, pos, size, len(buf) - pos)
        return st.unpack_from(buf, pos)[0], pos + size

    return read


def _read_uuid(buf: memoryview, pos: int) -> tuple[Any, int]:
    if pos + 16 > len(buf):
        raise wire.short("uuid", pos, 16, len(buf) - pos)
    return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16


def _primitive_reader(t: Primitive, name: str, nullable: bool, flex: bool) -> Reader:
    if t.name in FIXED_SIZE:
        return _fixed_reader(t)
    if t is UUID:
        return _read_uuid

    def not_null(pos: int) -> Exception:
        return wire.MalformedError(f"null {t.name} {name!r} at {pos} is not nullable")

    if t is STRING and not flex:
        return _sized_reader("string", name, nullable)
    if t is not STRING and not flex:
        return _sized_reader("bytes", name, nullable, copy=t is BYTES)
    if t is STRING:

        def read_str(buf: memoryview, pos: int) -> tuple[Any, int]:
            v, end = wire.read_string(buf, pos, flex)
            if v is None and not nullable:
                raise not_null(pos)
            return v, end

        return read_str

    copy = t is BYTES

    def read_bytes(buf: memoryview, pos: int) -> tuple[Any, int]:
        v, end = wire.read_bytes(buf, pos, flex)
        if v is None:
            if not nullable:
                raise not_null(pos)
            return None, end
        return (bytes(v) if copy else v), end

    return read_bytes


def _sized_reader(kind: str, name: str, nullable: bool, copy: bool = False) -> Reader:
    """A non-compact string (int16 length) or bytes (int32 length) field, length inlined for
    speed; bytes are a zero-copy slice unless ``copy``."""
    text = kind == "string"
    prefix = wire.I16 if text else wire.I32
    size = prefix.size

    def read(buf: memoryview, pos: int) -> tuple[Any, int]:
        start = pos + size
        if start > len(buf):
            raise wire.short(f"{kind} {name!r}", pos, size, len(buf) - pos)
        (n,) = prefix.unpack_from(buf, pos)
        if n < 0:
            if n == -1 and nullable:
                return None, start
            raise wire.MalformedError(f"{kind} {name!r} of length {n} at {pos}")
        end = start + n
        if end > len(buf):
            raise wire.short(f"{kind} {name!r}", start, n, len(buf) - start)
        if text:
            try:
                return str(buf[start:end], "utf-8"), end
            except UnicodeDecodeError as e:
                raise wire.MalformedError(f"{kind} {name!r} at {pos} is not UTF-8") from e
        return (bytes(buf[start:end]) if copy else buf[start:end]), end

    return read


def read_array_length(
    buf: memoryview, pos: int, flex: bool, name: str, nullable: bool, min_size: int
) -> tuple[int, int]:
    """An array's element count and the position after it: ``(-1, pos)`` for a null array.

    The count is an int32, -1 for null (a uvarint of count + 1, 0 for null, in flexible
    versions). Like Kafka's generated readers, a count below -1, a null count in a field that
    is not nullable at this version and a count whose elements cannot fit in the bytes left
    (``count * min_size`` of them) raise :data:`wire.MalformedError` before anything is
    allocated. The int32 is read here rather than by :func:`wire.read_length` (one call less
    per array: this runs for every array of every request).
    """
    if flex:
        n, pos = wire.read_uvarint(buf, pos)
        n -= 1
    elif pos + 4 > len(buf):
        raise wire.short("length", pos, 4, len(buf) - pos)
    else:
        (n,) = _ARRAY_COUNT.unpack_from(buf, pos)
        if n < -1:
            raise wire.MalformedError(f"negative length {n} at {pos}")
        pos += 4
    if n < 0:
        if not nullable:
            raise wire.MalformedError(f"null array {name!r} at {pos}")
        return -1, pos
    if n * min_size > len(buf) - pos:
        raise wire.short(f"array {name!r} of {n}", pos, n * min_size, len(buf) - pos)
    return n, pos


def _array_reader(t: Array, name: str, version: int, nullable: bool, flex: bool) -> Reader:
    elem = t.element
    if isinstance(elem, Primitive) and elem.name in FIXED_SIZE:
        code, size = elem.code, elem.size

        def read_fixed(buf: memoryview, pos: int) -> tuple[Any, int]:
            n, pos = read_array_length(buf, pos, flex, name, nullable, size)
            if n < 0:
                return None, pos
            return list(struct.unpack_from(f">{n}{code}", buf, pos)), pos + n * size

        return read_fixed

    if isinstance(elem, Struct) and not flex:
        fixed = _fixed_struct(elem.fields, version)
        if fixed is not None:
            return _fixed_struct_array_reader(name, nullable, *fixed)
    if isinstance(elem, Primitive):
        er = _primitive_reader(elem, name, False, flex)
    else:
        er = _struct_reader(elem.fields, version, flex)
    min_size = max(1, _min_size(elem, version, flex))

    def read_array(buf: memoryview, pos: int) -> tuple[Any, int]:
        n, pos = read_array_length(buf, pos, flex, name, nullable, min_size)
        if n < 0:
            return None, pos
        out = []
        for _ in range(n):
            v, pos = er(buf, pos)
            out.append(v)
        return out, pos

    return read_array


def _fixed_struct(
    fields: tuple[Field, ...], version: int
) -> tuple[tuple[str, ...], struct.Struct, dict[str, Any]] | None:
    """Names, Struct and absent-field defaults of a struct whose wire fields are all fixed-width."""
    runs = wire_runs(fields, version)
    absent = [fld for fld in fields if not _on_wire(fld, version)]
    if len(runs) != 1 or not isinstance(runs[0], tuple) or any(f.fresh_default() for f in absent):
        return None
    run = runs[0]
    names = tuple(fld.name for fld in run)
    return names, run_struct(run), {fld.name: fld.default_at(version) for fld in absent}


def _row_maker(names: tuple[str, ...], constant: dict[str, Any]) -> Callable[..., dict[str, Any]]:
    """A function building one struct dict from its unpacked values: a dict display is much
    faster than dict(zip(...)). The source is generated from declared field names only."""
    for n in (*names, *constant):
        if not n.isidentifier():
            raise ValueError(f"field name {n!r} is not an identifier")
    args = ", ".join(f"_{i}" for i in range(len(names)))
    items = ", ".join([f"{n!r}: _{i}" for i, n in enumerate(names)] + ["**C"])
    make: Callable[..., dict[str, Any]] = eval(f"lambda {args}: {{{items}}}", {"C": constant})
    return make


def _fixed_struct_array_reader(
    name: str, nullable: bool, names: tuple[str, ...], st: struct.Struct, constant: dict[str, Any]
) -> Reader:
    size = st.size
    make = _row_maker(names, constant)

    def read(buf: memoryview, pos: int) -> tuple[Any, int]:
        n, pos = read_array_length(buf, pos, False, name, nullable, size)
        if n < 0:
            return None, pos
        end = pos + n * size
        return [make(*row) for row in st.iter_unpack(buf[pos:end])], end

    return read


def field_reader(fld: Field, version: int, flex: bool) -> Reader:
    t = fld.type
    nullable = version in fld.nullable
    if isinstance(t, Primitive):
        return _primitive_reader(t, fld.name, nullable, flex)
    if isinstance(t, Array):
        return _array_reader(t, fld.name, version, nullable, flex)
    return _struct_reader(t.fields, version, flex)


def _on_wire(fld: Field, version: int) -> bool:
    """On the wire outside the tagged section (tagged fields exist only in flexible versions)."""
    return version in fld.versions and fld.tag is None


def _struct_reader(fields: tuple[Field, ...], version: int, flex: bool) -> Reader:
    # ops: (names, Struct, None) for a run of fixed-width fields, (name, None, reader) otherwise
    ops: list[tuple[Any, Any, Reader | None]] = []
    for run in wire_runs(fields, version):
        if isinstance(run, tuple):
            ops.append((tuple(fld.name for fld in run), run_struct(run), None))
        else:
            ops.append((run.name, None, field_reader(run, version, flex)))
    absent = [fld for fld in fields if not _on_wire(fld, version)]
    constant = {fld.name: fld.default_at(version) for fld in absent if not fld.fresh_default()}
    fresh = [fld for fld in absent if fld.fresh_default()]
    tagged: dict[int, tuple[str, Reader]] = {
        fld.tag: (fld.name, field_reader(fld, version, flex))
        for fld in fields
        if flex and fld.tag is not None and version in fld.versions
    }

    def read_tags(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
        count, pos = wire.read_uvarint(buf, pos)
        for _ in range(count):
            tag, pos = wire.read_uvarint(buf, pos)
            size, pos = wire.read_uvarint(buf, pos)
            end = pos + size
            if end > len(buf):
                raise wire.short("tagged field", pos, size, len(buf) - pos)
            entry = tagged.get(tag)
            if entry is not None:
                d[entry[0]], _ = entry[1](buf[:end], pos)
            pos = end
        return pos

    def read(buf: memoryview, pos: int) -> tuple[Any, int]:
        d = constant.copy()
        if fresh:
            for fld in fresh:
                d[fld.name] = fld.default_at(version)
        for key, st, rd in ops:
            if rd is not None:
                d[key], pos = rd(buf, pos)
                continue
            end = pos + st.size
            if end > len(buf):
                raise wire.short(f"fields {key}", pos, st.size, len(buf) - pos)
            d.update(zip(key, st.unpack_from(buf, pos), strict=True))
            pos = end
        if flex:
            pos = read_tags(buf, pos, d)
        return d, pos

    return read


def message_reader(fields: tuple[Field, ...], version: int, flex: bool) -> Reader:
    return _struct_reader(fields, version, flex)
