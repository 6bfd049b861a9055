"""How the compilers (decoder.py, encoder.py) split a struct's fields: runs of fixed width.

A struct's wire fields at a version are those whose ``versions`` hold it and that are not
tagged (tagged fields go in the tagged-field section of flexible versions). Consecutive
fixed-width primitives (``schema.FIXED_SIZE``: int8..int64, uint16, float64, bool) form a run
that is read or written with one precompiled big-endian ``struct.Struct``; every other field
(strings, bytes, records, uuids, arrays, structs) is read or written on its own.
"""

from __future__ import annotations

import struct

from tiered_mq.protocol.schema import FIXED_SIZE, Field, Primitive


def wire_runs(fields: tuple[Field, ...], version: int) -> list[Field | tuple[Field, ...]]:
    """The wire fields at ``version`` in declaration order, each run of consecutive fixed-width
    fields gathered into a tuple (never empty); any other field stands alone."""
    out: list[Field | tuple[Field, ...]] = []
    run: list[Field] = []
    for fld in fields:
        if version not in fld.versions or fld.tag is not None:
            continue
        if isinstance(fld.type, Primitive) and fld.type.name in FIXED_SIZE:
            run.append(fld)
            continue
        if run:
            out.append(tuple(run))
            run = []
        out.append(fld)
    if run:
        out.append(tuple(run))
    return out


def run_struct(run: tuple[Field, ...] | list[Field]) -> struct.Struct:
    """The big-endian ``struct.Struct`` of a run of fixed-width fields, in field order."""
    codes = "".join(fld.type.code for fld in run if isinstance(fld.type, Primitive))
    return struct.Struct(">" + codes)
