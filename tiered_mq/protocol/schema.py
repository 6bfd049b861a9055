"""The declaration language for Kafka protocol messages.

Each API module under ``messages/`` declares its request and response as a :class:`Message`:
a list of :class:`Field` built with :func:`f`. The language follows Kafka's JSON message specs
(``clients/src/main/resources/common/message/*.json``) closely, so a declaration can be checked
against the spec by eye:

    REQUEST = Message(1, "FetchRequest", "4-11", flexible="12+", fields=(
        f("replica_id", INT32, default=-1),
        f("topics", array(
            f("topic", STRING),
            f("partitions", array(f("partition", INT32), ...)),
        )),
    ))

Version ranges are Kafka's strings: ``"0+"`` (default), ``"3+"``, ``"2-4"``, ``"5"``, ``"none"``.
A field is on the wire only in its ``versions``; it may be null (-1 length, or 0 in compact
encodings) only in its ``nullable`` versions. ``tag`` makes a field a tagged field in flexible
versions (it is then encoded in the struct's tagged-field section, and only when it differs
from its default).

Field names are the spec's names in snake_case (``PartitionIndex`` -> ``partition_index``).
Defaults: an explicit ``default=``, else None where the field is nullable in that version, else
0 / False / "" / b"" / [] / the all-zero UUID / a dict of the struct's defaults. ``records`` fields
default to empty (never null), as Kafka's broker always sends non-null records.

Declarations are plain data: :mod:`~tiered_mq.protocol.decoder` and
:mod:`~tiered_mq.protocol.encoder` turn each (message, version) into closures once; a unit test
checks every declaration against Kafka's JSON specs (field order, versions, nullability, tags).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

MAX_VERSION: Final = 0x7FFF


class Versions(NamedTuple):
    """An inclusive version range; ``lo > hi`` is the empty range."""

    lo: int
    hi: int

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    @property
    def empty(self) -> bool:
        return self.lo > self.hi


NONE: Final = Versions(1, 0)


def parse_versions(spec: str | Versions) -> Versions:
    """Parse Kafka's version-range syntax: ``"3+"``, ``"2-4"``, ``"5"``, ``"none"``."""
    if isinstance(spec, Versions):
        return spec
    s = spec.strip()
    if s == "none":
        return NONE
    if s.endswith("+"):
        return Versions(int(s[:-1]), MAX_VERSION)
    if "-" in s:
        lo, hi = s.split("-", 1)
        return Versions(int(lo), int(hi))
    return Versions(int(s), int(s))


class Primitive(NamedTuple):
    """A scalar wire type. ``code`` is its struct format char ("" for variable-length types)."""

    name: str
    code: str
    size: int  # fixed size, or the minimum size of the non-compact encoding
    zero: Any


INT8: Final = Primitive("int8", "b", 1, 0)
INT16: Final = Primitive("int16", "h", 2, 0)
UINT16: Final = Primitive("uint16", "H", 2, 0)
INT32: Final = Primitive("int32", "i", 4, 0)
INT64: Final = Primitive("int64", "q", 8, 0)
FLOAT64: Final = Primitive("float64", "d", 8, 0.0)
BOOL: Final = Primitive("bool", "?", 1, False)
UUID: Final = Primitive("uuid", "", 16, uuid.UUID(int=0))
STRING: Final = Primitive("string", "", 2, "")
BYTES: Final = Primitive("bytes", "", 4, b"")
RECORDS: Final = Primitive("records", "", 4, b"")

FIXED_SIZE: Final = {p.name: p.size for p in (INT8, INT16, UINT16, INT32, INT64, FLOAT64, BOOL)}


@dataclass(frozen=True)
class Struct:
    """A nested struct: as an array element or a single struct-typed field."""

    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Array:
    """An array of a primitive or of a struct."""

    element: Primitive | Struct


FieldType = Primitive | Struct | Array


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    versions: Versions
    nullable: Versions = NONE
    default: Any = None
    has_default: bool = False
    tag: int | None = None

    def default_at(self, version: int) -> Any:
        """The value a missing field takes at ``version`` (a fresh object for arrays/structs)."""
        if self.has_default:
            return self.default
        t = self.type
        if isinstance(t, Primitive):
            if version in self.nullable and t is not RECORDS:
                return None
            return t.zero
        if version in self.nullable:
            return None
        if isinstance(t, Array):
            return []
        return {fld.name: fld.default_at(version) for fld in t.fields}

    def fresh_default(self) -> bool:
        """True when the default is a mutable object that must not be shared between dicts."""
        return not self.has_default and not isinstance(self.type, Primitive)


_UNSET: Final = object()


def f(
    name: str,
    type_: FieldType,
    versions: str = "0+",
    *,
    nullable: str = "none",
    default: Any = _UNSET,
    tag: int | None = None,
) -> Field:
    """Declare a field (see the module docstring)."""
    return Field(
        name=name,
        type=type_,
        versions=parse_versions(versions),
        nullable=parse_versions(nullable),
        default=None if default is _UNSET else default,
        has_default=default is not _UNSET,
        tag=tag,
    )


def array(*items: Field | Primitive) -> Array:
    """``array(INT32)`` for a primitive array, ``array(f(...), f(...))`` for an array of structs."""
    if len(items) == 1 and isinstance(items[0], Primitive):
        return Array(items[0])
    fields = tuple(i for i in items if isinstance(i, Field))
    if len(fields) != len(items):
        raise TypeError("array() takes one Primitive or several Fields")
    return Array(Struct(fields))


def struct(*fields: Field) -> Struct:
    """A single nested struct field (e.g. ``CurrentLeader``)."""
    return Struct(tuple(fields))


@dataclass(frozen=True)
class Message:
    """One side (request or response) of one API across its valid versions."""

    api_key: int
    name: str
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...] = field(default_factory=tuple)

    def __init__(
        self,
        api_key: int,
        name: str,
        valid: str,
        *,
        flexible: str = "none",
        fields: tuple[Field, ...] | list[Field] = (),
    ) -> None:
        object.__setattr__(self, "api_key", api_key)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "valid", parse_versions(valid))
        object.__setattr__(self, "flexible", parse_versions(flexible))
        object.__setattr__(self, "fields", tuple(fields))

    def defaults(self, version: int) -> dict[str, Any]:
        """Every top-level field's default at ``version``."""
        return {fld.name: fld.default_at(version) for fld in self.fields}
