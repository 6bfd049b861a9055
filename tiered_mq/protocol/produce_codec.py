"""Produce v3-8 request body reader and response writer, written out by hand.

Produce is the broker's hottest request (librdkafka sends one per partition and linger.ms), and
its shape is small and fixed (messages/produce.py; non-flexible up to v8)::

    request   transactional_id str16?, acks i16, timeout_ms i32,
              topic_data [i32 n] { name str16, partition_data [i32 n] { index i32, records b32? } }
    response  responses [i32 n] { name str16, partition_responses [i32 n] {
                  index i32, error_code i16, base_offset i64, log_append_time_ms i64,
                  log_start_offset i64 (v5+), record_errors [i32 n] (v8+) {
                      batch_index i32, batch_index_error_message str16? },
                  error_message str16? (v8+) } },
              throttle_time_ms i32

Both give exactly what the schema-driven codec gives (decoder.py, encoder.py; checked by
tests/unit/protocol/test_produce_codec.py) at about a third of its cost. Neither reports an
error: they return None for anything outside the common case (a truncated or malformed body,
a null where none is allowed, a missing response field, a value out of range), and the
caller falls back to the generic codec, which raises its usual error or fills the defaults.
"""

from __future__ import annotations

import struct
from typing import Any, Final

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_ACKS_TIMEOUT: Final = struct.Struct(">hi")
_PARTITION_V3: Final = struct.Struct(">ihqq")  # index, error_code, base_offset, append time
_I64: Final = struct.Struct(">q")
_INDEX_SIZE: Final = struct.Struct(">ii")  # partition index, records length
_ERRORS: Final = (struct.error, TypeError, KeyError, AttributeError, UnicodeError, ValueError)

MIN_VERSION: Final = 3
MAX_VERSION: Final = 8


def _str16(buf: memoryview, pos: int) -> tuple[str | None, int]:
    (n,) = _I16.unpack_from(buf, pos)
    pos += 2
    if n < 0:
        if n != -1:
            raise ValueError(f"string length {n}")
        return None, pos
    end = pos + n
    if end > len(buf):
        raise ValueError("truncated string")
    return str(buf[pos:end], "utf-8"), end


def read_request(buf: memoryview) -> dict[str, Any] | None:
    """A Produce v3-8 request body as the generic reader decodes it (``records`` a zero-copy
    slice of ``buf``), or None to let the generic reader decode it (or report the error)."""
    try:
        txn_id, pos = _str16(buf, 0)
        acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, pos)
        pos += _ACKS_TIMEOUT.size
        (n_topics,) = _I32.unpack_from(buf, pos)
        pos += 4
        if n_topics < 0:
            return None
        topics = []
        for _ in range(n_topics):
            name, pos = _str16(buf, pos)
            (n_parts,) = _I32.unpack_from(buf, pos)
            pos += 4
            if name is None or n_parts < 0:
                return None
            parts = []
            for _ in range(n_parts):
                index, size = _INDEX_SIZE.unpack_from(buf, pos)
                pos += 8
                records = None
                if size >= 0:
                    end = pos + size
                    if end > len(buf):
                        return None
                    records, pos = buf[pos:end], end
                elif size != -1:
                    return None
                parts.append({"index": index, "records": records})
            topics.append({"name": name, "partition_data": parts})
    except _ERRORS:
        return None
    return {
        "transactional_id": txn_id,
        "acks": acks,
        "timeout_ms": timeout_ms,
        "topic_data": topics,
    }


def _put_str16(out: bytearray, s: str | None, nullable: bool) -> None:
    if s is None:
        if not nullable:
            raise ValueError("null string")
        out += b"\xff\xff"
        return
    b = s.encode("utf-8")
    if len(b) > 0x7FFF:
        raise ValueError("string too long")
    out += _I16.pack(len(b))
    out += b


def write_response(version: int, header: bytes, body: dict[str, Any]) -> bytearray | None:
    """The whole response frame (int32 size, ``header``, body) of a Produce v3-8 response whose
    dicts hold every field the version carries, or None to let the generic writer do it."""
    out = bytearray(b"\x00\x00\x00\x00")
    out += header
    try:
        responses = body["responses"]
        out += _I32.pack(len(responses))
        for topic in responses:
            _put_str16(out, topic["name"], False)
            parts = topic["partition_responses"]
            out += _I32.pack(len(parts))
            for p in parts:
                out += _PARTITION_V3.pack(
                    p["index"], p["error_code"], p["base_offset"], p["log_append_time_ms"]
                )
                if version >= 5:
                    out += _I64.pack(p["log_start_offset"])
                if version >= 8:
                    errors = p["record_errors"]
                    out += _I32.pack(len(errors))
                    for e in errors:
                        out += _I32.pack(e["batch_index"])
                        _put_str16(out, e["batch_index_error_message"], True)
                    _put_str16(out, p["error_message"], True)
        out += _I32.pack(body["throttle_time_ms"])
    except _ERRORS:
        return None
    _I32.pack_into(out, 0, len(out) - 4)
    return out
