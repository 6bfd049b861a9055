"""Random example values for a message at a version, built from its declaration.

``sample(msg, version, rng)`` returns the dict the decoder would return for the bytes the
encoder makes of it: every declared field present, fields not on the wire at ``version``
holding their default (so ``decode(encode(x)) == x`` can be asserted directly).
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from tiered_mq.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UUID,
    Field,
    Message,
    Primitive,
    Struct,
)

_RANGES = {
    INT8.name: (-(2**7), 2**7 - 1),
    INT16.name: (-(2**15), 2**15 - 1),
    UINT16.name: (0, 2**16 - 1),
    INT32.name: (-(2**31), 2**31 - 1),
    INT64.name: (-(2**63), 2**63 - 1),
}
_ALPHABET = "abcxyz-_.09 éß€🙂"


def _primitive(t: Primitive, nullable: bool, rng: random.Random) -> Any:
    if nullable and t is not RECORDS and rng.random() < 0.2:
        return None
    if t.name in _RANGES:
        lo, hi = _RANGES[t.name]
        return (
            rng.choice([lo, hi, 0, -1, 1, rng.randint(lo, hi)]) if lo < 0 else rng.randint(lo, hi)
        )
    if t is BOOL:
        return rng.random() < 0.5
    if t is FLOAT64:
        return rng.uniform(-1e9, 1e9)
    if t is UUID:
        return uuid.UUID(int=rng.getrandbits(128))
    if t is STRING:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 8)))
    if t is BYTES or t is RECORDS:
        if t is RECORDS and nullable and rng.random() < 0.1:
            return None
        return rng.randbytes(rng.randint(0, 24))
    raise AssertionError(t)


def _value(fld: Field, version: int, flex: bool, rng: random.Random) -> Any:
    nullable = version in fld.nullable
    t = fld.type
    if isinstance(t, Primitive):
        return _primitive(t, nullable, rng)
    if isinstance(t, Struct):
        return sample_struct(t.fields, version, flex, rng)
    if nullable and rng.random() < 0.2:
        return None
    n = rng.randint(0, 3)
    elem = t.element
    if isinstance(elem, Primitive):
        return [_primitive(elem, False, rng) for _ in range(n)]
    return [sample_struct(elem.fields, version, flex, rng) for _ in range(n)]


def sample_struct(
    fields: tuple[Field, ...], version: int, flex: bool, rng: random.Random
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fld in fields:
        on_wire = version in fld.versions and (fld.tag is None or flex)
        if not on_wire:
            out[fld.name] = fld.default_at(version)
        elif fld.tag is not None and rng.random() < 0.3:
            out[fld.name] = fld.default_at(version)  # tagged and left at its default
        else:
            out[fld.name] = _value(fld, version, flex, rng)
    return out


def sample(msg: Message, version: int, rng: random.Random) -> dict[str, Any]:
    out = sample_struct(msg.fields, version, version in msg.flexible, rng)
    if msg.name == "ApiVersionsResponse":
        out["error_code"] = 0  # an erroneous ApiVersions response is always v0 (own test)
    return out


def plain(value: Any) -> Any:
    """Decoded value with memoryviews turned into bytes, for equality checks."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def all_versions(table: dict[int, Message]) -> list[tuple[int, int]]:
    return [(k, v) for k, m in sorted(table.items()) for v in range(m.valid.lo, m.valid.hi + 1)]
