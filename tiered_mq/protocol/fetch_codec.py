"""Fetch v4-11 response writer, written out by hand.

Fetch is the broker's hottest response (a consumer following the log end gets one per
``fetch.wait.max.ms`` or per append), and its shape is small and fixed (messages/fetch.py; all
supported versions are non-flexible: no tagged fields, no diverging epoch, current leader or
snapshot id, which come with v12)::

    response  throttle_time_ms i32, error_code i16 (v7+), session_id i32 (v7+),
              responses [i32 n] { topic str16, partitions [i32 n] {
                  partition_index i32, error_code i16, high_watermark i64,
                  last_stable_offset i64, log_start_offset i64 (v5+),
                  aborted_transactions [i32 n, -1 = null] { producer_id i64, first_offset i64 },
                  preferred_read_replica i32 (v11+),
                  records i32 size (-1 = null) + bytes } }

It gives exactly the chunks the schema-driven writer gives (encoder.py; checked by
tests/unit/protocol/test_fetch_codec.py) at a fraction of its cost, and keeps ``records`` out
of the copy the same way: bytes, a bytearray or a memoryview up to ``INLINE_RECORDS_MAX`` are
copied into the frame; a bigger one, a ``FileRegion``, or a list of ``bytes | memoryview |
FileRegion`` closes the current buffer and goes as chunks of its own (empty parts dropped),
so the server sends FileRegions with sendfile. Nothing is ever read from a FileRegion.

It reports no error: it returns None for anything outside the common case (a missing field,
a null where none is allowed, a value out of range, a records part of another type), and the
caller falls back to the generic writer, which fills the defaults or raises its usual error.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from tiered_mq.protocol.encoder import INLINE_RECORDS_MAX, Chunk
from tiered_mq.record.file_records import FileRegion

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_ABORTED: Final = struct.Struct(">qq")  # producer_id, first_offset
_TOP_V4: Final = struct.Struct(">ii")  # throttle_time_ms, responses count
_TOP_V7: Final = struct.Struct(">ihii")  # throttle_time_ms, error_code, session_id, count
# partition_index, error_code, high_watermark, last_stable_offset, [log_start_offset (v5+)],
# aborted_transactions count
_PARTITION_V4: Final = struct.Struct(">ihqqi")
_PARTITION_V5: Final = struct.Struct(">ihqqqi")
_REPLICA_SIZE: Final = struct.Struct(">ii")  # preferred_read_replica (v11+), records size
_ERRORS: Final = (
    struct.error,
    TypeError,
    KeyError,
    AttributeError,
    UnicodeError,
    ValueError,
    BufferError,
)

_BYTES: Final = (bytes, bytearray)  # a tuple: ``bytes | bytearray`` builds a union per test

MIN_VERSION: Final = 4
MAX_VERSION: Final = 11


class _Fallback(Exception):
    """A records part of a type the writer does not take: let the generic writer raise."""


def _own_chunks(records: Any) -> tuple[int, list[Chunk]]:
    """A FileRegion or a list of parts: (their total size, the non-empty ones)."""
    parts = [records] if isinstance(records, FileRegion) else records
    total = 0
    kept: list[Chunk] = []
    for p in parts:
        if isinstance(p, FileRegion):
            n = p.length
        elif isinstance(p, _BYTES):
            n = len(p)
        elif isinstance(p, memoryview):
            n = p.nbytes
        else:
            raise _Fallback
        total += n
        if n:
            kept.append(p)
    return total, kept


def write_response(version: int, header: bytes, body: dict[str, Any]) -> list[Chunk] | None:
    """The chunks of the whole response frame (int32 size, ``header``, body) of a Fetch v4-11
    response whose dicts hold every field the version carries, or None to let the generic
    writer do it. The first chunk is a bytearray; FileRegions come as chunks of their own."""
    chunks: list[Chunk] = []
    out = bytearray(b"\x00\x00\x00\x00")
    out += header
    closed = 0  # bytes in ``chunks``
    v5 = version >= 5
    v11 = version >= 11
    try:
        responses = body["responses"]
        if version >= 7:
            out += _TOP_V7.pack(
                body["throttle_time_ms"], body["error_code"], body["session_id"], len(responses)
            )
        else:
            out += _TOP_V4.pack(body["throttle_time_ms"], len(responses))
        for topic in responses:
            name = topic["topic"].encode("utf-8")
            if len(name) > 0x7FFF:
                return None
            parts = topic["partitions"]
            out += _I16.pack(len(name))
            out += name
            out += _I32.pack(len(parts))
            for p in parts:
                aborted = p["aborted_transactions"]
                count = -1 if aborted is None else len(aborted)
                if v5:
                    out += _PARTITION_V5.pack(
                        p["partition_index"],
                        p["error_code"],
                        p["high_watermark"],
                        p["last_stable_offset"],
                        p["log_start_offset"],
                        count,
                    )
                else:
                    out += _PARTITION_V4.pack(
                        p["partition_index"],
                        p["error_code"],
                        p["high_watermark"],
                        p["last_stable_offset"],
                        count,
                    )
                if count > 0:
                    for t in aborted:
                        out += _ABORTED.pack(t["producer_id"], t["first_offset"])
                records = p["records"]
                own: list[Chunk] | None = None
                if type(records) is list:  # a read's regions: the common case first
                    size, own = _own_chunks(records)
                elif records is None:
                    size = -1
                elif isinstance(records, _BYTES):
                    size = len(records)
                elif isinstance(records, memoryview):
                    size = records.nbytes
                else:
                    size, own = _own_chunks(records)
                if own is None and size > INLINE_RECORDS_MAX:
                    own = [records]
                if v11:
                    out += _REPLICA_SIZE.pack(p["preferred_read_replica"], size)
                else:
                    out += _I32.pack(size)
                if own is None:
                    if size > 0:
                        out += records
                    continue
                chunks.append(out)
                chunks.extend(own)
                closed += len(out) + size
                out = bytearray()
    except (_Fallback, *_ERRORS):
        return None
    if out:
        chunks.append(out)
    first = chunks[0]
    assert isinstance(first, bytearray)
    _I32.pack_into(first, 0, closed + len(out) - 4)
    return chunks
