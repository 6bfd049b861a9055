"""Metadata v0-8 response writer, written out by hand.

A client asks Metadata for every topic at start, on every ``topic.metadata.refresh.interval.ms``
and after a leadership error, and the answer grows with the cluster (one entry per partition):
the schema-driven writer spent about half of the broker's CPU for such a request on it. Its
shape is small and fixed (messages/metadata.py; all supported versions are non-flexible: no
tagged fields)::

    response  throttle_time_ms i32 (v3+),
              brokers [i32 n] { node_id i32, host str16, port i32, rack str16? (v1+) },
              cluster_id str16? (v2+), controller_id i32 (v1+),
              topics [i32 n] { error_code i16, name str16, is_internal bool (v1+),
                  partitions [i32 n] { error_code i16, partition_index i32, leader_id i32,
                      leader_epoch i32 (v7+), replica_nodes [i32 n] i32,
                      isr_nodes [i32 n] i32, offline_replicas [i32 n] i32 (v5+) },
                  topic_authorized_operations i32 (v8+) },
              cluster_authorized_operations i32 (v8)

It gives exactly the bytes the schema-driven writer gives (encoder.py; checked by
tests/unit/protocol/test_metadata_codec.py), a missing field taking its declared default as
there. It reports no error: it returns None for anything outside the common case (a null where
none is allowed, a value out of range, a string over 32767 bytes, a field of another type), and
the caller falls back to the generic writer, which writes it or raises its usual error.
"""

from __future__ import annotations

import struct
from typing import Any, Final

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_UNSET_OPERATIONS: Final = -(2**31)  # the authorized-operations fields' default
_ERRORS: Final = (
    struct.error,
    TypeError,
    KeyError,
    AttributeError,
    UnicodeError,
    ValueError,
    OverflowError,
)
_MAX_CACHED_NODES: Final = 16  # replica lists up to this long share a compiled Struct

MIN_VERSION: Final = 0
MAX_VERSION: Final = 8

# per (leader epoch?, offline replicas?): (replicas, isr, offline counts) -> the Struct of a
# whole partition
_PARTITIONS: dict[tuple[bool, bool], dict[tuple[int, int, int], struct.Struct]] = {
    (epoch, offline): {} for epoch in (False, True) for offline in (False, True)
}


def _partition_struct(epoch: bool, offline: bool, counts: tuple[int, int, int]) -> struct.Struct:
    """error_code, partition_index, leader_id, [leader_epoch], the arrays with their counts."""
    nr, ni, no = counts
    fmt = ">hii" + ("i" if epoch else "") + "i" * (nr + 1) + "i" * (ni + 1)
    if offline:
        fmt += "i" * (no + 1)
    st = struct.Struct(fmt)
    if max(counts) <= _MAX_CACHED_NODES:
        _PARTITIONS[epoch, offline][counts] = st
    return st


def _str16(buf: bytearray, value: Any) -> None:
    """A non-null string; raises ValueError past 32767 bytes, AttributeError on a non-str."""
    b = value.encode("utf-8")
    n = len(b)
    if n > 0x7FFF:
        raise ValueError("string too long")
    buf += _I16.pack(n)
    buf += b


def _nullable_str16(buf: bytearray, value: Any) -> None:
    if value is None:
        buf += b"\xff\xff"
    else:
        _str16(buf, value)


def write_response(version: int, header: bytes, body: dict[str, Any]) -> bytearray | None:
    """The whole frame (int32 size, ``header``, body) of a Metadata v0-8 response, or None to
    let the generic writer do it."""
    buf = bytearray(b"\x00\x00\x00\x00")
    buf += header
    try:
        _write_body(buf, version, body)
    except _ERRORS:
        return None
    struct.pack_into(">i", buf, 0, len(buf) - 4)
    return buf


def _write_body(buf: bytearray, version: int, body: dict[str, Any]) -> None:
    get = body.get
    if version >= 3:
        buf += _I32.pack(get("throttle_time_ms", 0))
    brokers = get("brokers", [])
    buf += _I32.pack(len(brokers))
    for b in brokers:
        bget = b.get
        buf += _I32.pack(bget("node_id", 0))
        _str16(buf, bget("host", ""))
        buf += _I32.pack(bget("port", 0))
        if version >= 1:
            _nullable_str16(buf, bget("rack"))
    if version >= 2:
        _nullable_str16(buf, get("cluster_id"))
    if version >= 1:
        buf += _I32.pack(get("controller_id", -1))
    topics = get("topics", [])
    buf += _I32.pack(len(topics))
    epoch = version >= 7
    offline = version >= 5
    structs = _PARTITIONS[epoch, offline]
    for t in topics:
        try:  # the handler's entries hold every field but topic_authorized_operations
            code, name, internal, partitions = (
                t["error_code"],
                t["name"],
                t["is_internal"],
                t["partitions"],
            )
        except KeyError:
            tget = t.get
            code, name = tget("error_code", 0), tget("name", "")
            internal, partitions = tget("is_internal", False), tget("partitions", [])
        buf += _I16.pack(code)
        _str16(buf, name)
        if version >= 1:
            buf += b"\x01" if internal else b"\x00"
        buf += _I32.pack(len(partitions))
        for p in partitions:
            try:  # the handler's entries hold every field
                replicas, isr = p["replica_nodes"], p["isr_nodes"]
                off = p["offline_replicas"] if offline else ()
                head: tuple[Any, ...] = (p["error_code"], p["partition_index"], p["leader_id"])
                if epoch:
                    head += (p["leader_epoch"],)
            except KeyError:
                replicas, isr, off, head = _partition_defaults(p, epoch, offline)
            counts = (len(replicas), len(isr), len(off))  # a null array: TypeError
            st = structs.get(counts) or _partition_struct(epoch, offline, counts)
            if offline:
                buf += st.pack(*head, counts[0], *replicas, counts[1], *isr, counts[2], *off)
            else:
                buf += st.pack(*head, counts[0], *replicas, counts[1], *isr)
        if version >= 8:
            buf += _I32.pack(t.get("topic_authorized_operations", _UNSET_OPERATIONS))
    if version == 8:
        buf += _I32.pack(get("cluster_authorized_operations", _UNSET_OPERATIONS))


def _partition_defaults(
    p: dict[str, Any], epoch: bool, offline: bool
) -> tuple[Any, Any, Any, tuple[Any, ...]]:
    """A partition entry's arrays and leading fields, a missing one taking its default."""
    pget = p.get
    off = pget("offline_replicas", []) if offline else ()
    head: tuple[Any, ...] = (
        pget("error_code", 0),
        pget("partition_index", 0),
        pget("leader_id", 0),
    )
    if epoch:
        head += (pget("leader_epoch", -1),)
    return pget("replica_nodes", []), pget("isr_nodes", []), off, head
