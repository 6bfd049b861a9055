"""Records inside a v2 batch: encoding a batch and decoding its records.

A batch is the 61-byte header of :mod:`tiered_mq.record.batch` followed by ``recordsCount``
records, compressed as one payload when attribute bits 0-2 name a codec. One record::

    length          varint   bytes after this field
    attributes      i8       unused, 0
    timestampDelta  varlong  from the batch's baseTimestamp
    offsetDelta     varint   from the batch's baseOffset
    keyLength       varint   -1 = null key
    key             bytes
    valueLength     varint   -1 = null value
    value           bytes
    headersCount    varint
    headers         [headerKeyLength varint, headerKey utf-8,
                     headerValueLength varint (-1 = null), headerValue] ...

Varints are zigzag-encoded base-128 groups (see :mod:`tiered_mq.record.varint`).

Decoded records carry absolute offsets (baseOffset + offsetDelta) and timestamps
(baseTimestamp + timestampDelta, or maxTimestamp for every record when the batch's timestamp
type is LogAppendTime, as Kafka's consumers report it).

Invariants checked on decode: the batch checks of ``validate_batch`` (length, magic, count,
CRC-32C), the payload decompresses, every record stays inside its declared length and the
batch, the records exactly fill the payload, and varints other than the timestamp delta take
at most 5 bytes and 32 bits (as Java's readers require). Any violation raises
CorruptRecordError with the batch's base offset and what is wrong; attribute bits naming no
codec (5-7) raise UnsupportedCompressionTypeError. No IndexError or struct.error escapes.

Decoding is per batch in one tight loop over a ``bytes`` payload (Spark executors decode
millions of records with it): one- and two-byte varints are read inline and zigzag-decoded
by table lookup, longer ones by a helper.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import crc32c

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    MIN_RECORD_SIZE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    peek_size,
    validate_batch,
)
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES, FRAME_MAGIC
from tiered_mq.record.compression import compress as _compress
from tiered_mq.record.compression import decompress as _decompress
from tiered_mq.record.varint import (
    ZIGZAG,
    decode_varint,
    encode_varint,
    varint32_tail,
    varint_tail,
)

Header = tuple[str, bytes | None]
Buffer = bytes | bytearray | memoryview

NO_TIMESTAMP: Final = -1


@dataclass(slots=True)
class Record:
    """One decoded record with its absolute offset and timestamp (ms)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)


# -- encoding ------------------------------------------------------------------------------

RecordInput = Any  # a Record-like object (key, value, headers, timestamp) or such a tuple


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _fields(item: RecordInput) -> tuple[bytes | None, bytes | None, Sequence[Any], int | None]:
    if isinstance(item, tuple):
        key, value, headers, timestamp = item
    else:
        key, value, headers, timestamp = item.key, item.value, item.headers, item.timestamp
    if isinstance(headers, Mapping):
        headers = list(headers.items())
    return key, value, headers or (), timestamp


def _encode_bytes(data: bytes | bytearray | memoryview | str | None) -> list[bytes]:
    if data is None:
        return [b"\x01"]  # zigzag(-1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return [encode_varint(len(data)), bytes(data)]


def _encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[Any],
) -> bytes:
    parts = [b"\x00", encode_varint(timestamp_delta), encode_varint(offset_delta)]
    parts += _encode_bytes(key)
    parts += _encode_bytes(value)
    parts.append(encode_varint(len(headers)))
    for h_key, h_value in headers:
        parts += _encode_bytes(h_key)
        parts += _encode_bytes(h_value)
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch(
    records: Sequence[RecordInput],
    *,
    compression: int = 0,
    base_offset: int = 0,
    base_timestamp: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    log_append_time: bool = False,
    append_time: int | None = None,
    keep_offsets: bool = False,
    last_offset_delta: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """Encode one v2 batch (CRC-32C included).

    ``records`` are Record-like objects or ``(key, value, headers, timestamp)`` tuples; headers
    are ``(str, bytes | None)`` pairs or a mapping (None = none); a None timestamp means now.
    Offset deltas are 0, 1, 2 ... unless ``keep_offsets`` (compaction), which takes
    ``record.offset - base_offset`` (strictly increasing, tuples not allowed).
    ``base_timestamp`` defaults to the first record's timestamp. With ``log_append_time`` the
    batch's maxTimestamp is ``append_time`` (default now) and readers report it for every record.
    ``last_offset_delta`` defaults to the last record's delta; compaction keeps the original.
    """
    now = -1
    encoded: list[bytes] = []
    max_ts = NO_TIMESTAMP
    prev_delta = -1
    for index, item in enumerate(records):
        key, value, headers, ts = _fields(item)
        if ts is None:
            if now < 0:
                now = _now_ms()
            ts = now
        if base_timestamp is None:
            base_timestamp = ts
        if keep_offsets:
            if isinstance(item, tuple):
                raise ValueError("keep_offsets needs Record-like inputs with an offset")
            delta = item.offset - base_offset
            if delta <= prev_delta:
                raise ValueError(f"offset {item.offset} not above the previous record's")
        else:
            delta = index
        prev_delta = delta
        max_ts = max(max_ts, ts)
        encoded.append(_encode_record(delta, ts - base_timestamp, key, value, headers))
    if base_timestamp is None:
        base_timestamp = NO_TIMESTAMP
    if last_offset_delta is None:
        last_offset_delta = max(prev_delta, 0)
    elif last_offset_delta < prev_delta:
        raise ValueError(f"last_offset_delta {last_offset_delta} below last record's {prev_delta}")
    if compression & COMPRESSION_MASK != compression:
        raise ValueError(f"compression codec {compression} out of range")
    # An empty batch (all records compacted away) is written uncompressed, as Kafka does.
    attributes = compression if encoded else 0
    if log_append_time:
        attributes |= TIMESTAMP_TYPE_MASK
        max_ts = _now_ms() if append_time is None else append_time
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG
    if is_control:
        attributes |= CONTROL_FLAG
    payload = b"".join(encoded)
    if attributes & COMPRESSION_MASK:
        payload = _compress(compression, payload, compression_level)
    try:
        head = HEADER.pack(
            base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_ts,
            producer_id,
            producer_epoch,
            base_sequence,
            len(encoded),
        )
    except Exception as exc:  # struct.error: a field out of its range
        raise ValueError(f"batch header field out of range: {exc}") from exc
    out = bytearray(head)
    out += payload
    crc = crc32c.crc32c(memoryview(out)[CRC_START:])
    out[17:21] = crc.to_bytes(4, "big")
    return bytes(out)


# -- decoding ------------------------------------------------------------------------------


def _parse_records(data: bytes, count: int, base_offset: int, base_ts: int) -> list[Record]:
    """Parse ``count`` records filling ``data`` exactly (IndexError means an overrun).

    Each varint is read inline when it takes one or two bytes (lengths and deltas below 8192),
    by :func:`varint_tail` otherwise.
    """
    out: list[Record] = []
    append = out.append
    tail = varint_tail  # the timestamp delta's (a varlong)
    tail32 = varint32_tail  # every other field's
    zz = ZIGZAG
    end = len(data)
    pos = 0
    for _ in range(count):
        z = data[pos]
        if z < 0x80:
            length = zz[z]
            pos += 1
        else:
            z2 = data[pos + 1]
            if z2 < 0x80:
                length = zz[(z & 0x7F) | (z2 << 7)]
                pos += 2
            else:
                z, pos = tail32(data, pos + 1, z)
                length = (z >> 1) ^ -(z & 1)
        rec_end = pos + length
        if length < 6 or rec_end > end:
            raise CorruptRecordError(f"record length {length} at {pos} overruns {end} bytes")
        pos += 1  # the attributes byte, unused
        z = data[pos]
        if z < 0x80:
            ts_delta = zz[z]
            pos += 1
        else:
            z2 = data[pos + 1]
            if z2 < 0x80:
                ts_delta = zz[(z & 0x7F) | (z2 << 7)]
                pos += 2
            else:
                z, pos = tail(data, pos + 1, z)
                ts_delta = (z >> 1) ^ -(z & 1)
        z = data[pos]
        if z < 0x80:
            offset_delta = zz[z]
            pos += 1
        else:
            z2 = data[pos + 1]
            if z2 < 0x80:
                offset_delta = zz[(z & 0x7F) | (z2 << 7)]
                pos += 2
            else:
                z, pos = tail32(data, pos + 1, z)
                offset_delta = (z >> 1) ^ -(z & 1)
        z = data[pos]
        if z < 0x80:
            pos += 1
        else:
            z2 = data[pos + 1]
            if z2 < 0x80:
                z = (z & 0x7F) | (z2 << 7)
                pos += 2
            else:
                z, pos = tail32(data, pos + 1, z)
        if not z & 1:
            z = pos + (z >> 1)
            key = data[pos:z]
            pos = z
        elif z == 1:
            key = None
        else:
            raise CorruptRecordError(f"negative key length at {pos}")
        z = data[pos]
        if z < 0x80:
            pos += 1
        else:
            z2 = data[pos + 1]
            if z2 < 0x80:
                z = (z & 0x7F) | (z2 << 7)
                pos += 2
            else:
                z, pos = tail32(data, pos + 1, z)
        if not z & 1:
            z = pos + (z >> 1)
            value = data[pos:z]
            pos = z
        elif z == 1:
            value = None
        else:
            raise CorruptRecordError(f"negative value length at {pos}")
        z = data[pos]
        pos += 1
        if z == 0:
            headers: list[Header] = []
        else:
            if z >= 0x80:
                z, pos = tail32(data, pos, z)
            headers, pos = parse_headers(data, pos, (z >> 1) ^ -(z & 1), rec_end)
        if pos != rec_end:
            raise CorruptRecordError(
                f"record at offset {base_offset + offset_delta} overruns its declared "
                f"length {length} by {pos - rec_end} bytes"
            )
        append(Record(base_offset + offset_delta, base_ts + ts_delta, key, value, headers))
    if pos != end:
        raise CorruptRecordError(f"{end - pos} bytes left after {count} records")
    return out


def parse_headers(data: bytes, pos: int, count: int, rec_end: int) -> tuple[list[Header], int]:
    """``count`` record headers from ``pos`` (IndexError means an overrun): (headers, end)."""
    if count < 0 or count * 2 > rec_end - pos:
        raise CorruptRecordError(f"header count {count} impossible at {pos}")
    headers: list[Header] = []
    for _ in range(count):
        key_len, pos = _read_len(data, pos)
        if key_len < 0:
            raise CorruptRecordError(f"null header key at {pos}")
        try:
            h_key = data[pos : pos + key_len].decode("utf-8", "surrogateescape")
        except UnicodeDecodeError as exc:  # pragma: no cover - surrogateescape accepts all bytes
            raise CorruptRecordError(f"header key not utf-8 at {pos}") from exc
        pos += key_len
        val_len, pos = _read_len(data, pos)
        if val_len < 0:
            headers.append((h_key, None))
        else:
            headers.append((h_key, data[pos : pos + val_len]))
            pos += val_len
    return headers, pos


def check_records_start(h: BatchHeader, payload: memoryview) -> None:
    """A constant-time look at the start of a batch's records (CorruptRecordError when wrong):
    the codec's magic bytes, or for uncompressed records the first record's framing (its
    length inside the batch, offset delta 0). Garbage from a broken encoder is refused this
    way, before :func:`check_records` reads the rest."""
    if h.compression:
        magic = FRAME_MAGIC.get(h.compression)
        if magic is not None and bytes(payload[: len(magic)]) != magic:
            raise CorruptRecordError(f"codec {h.compression} payload does not start like one")
        return
    try:
        length, pos = decode_varint(payload, 0)
        pos = decode_varint(payload, pos + 1)[1]  # after the attributes: timestamp delta
        offset_delta = decode_varint(payload, pos)[0]
    except CorruptRecordError as e:
        raise CorruptRecordError(f"first record undecodable: {e}") from None
    if not 0 < length <= len(payload) or offset_delta != 0:
        raise CorruptRecordError(
            f"first record malformed: length {length} in {len(payload)} bytes, "
            f"offset delta {offset_delta}"
        )


def check_records(
    buf: Buffer, pos: int = 0, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES
) -> tuple[int, list[Record]]:
    """Decode the produced batch at ``pos`` (base offset 0; :func:`decode_batch`, its payload
    decompressed to at most ``max_size`` bytes) and check what Kafka's LogValidator checks
    beyond it: offset deltas 0, 1, ... in order (the ones the header's ``lastOffsetDelta``
    promises), else CorruptRecordError; a batch failing it would be stored and then break
    every consumer that fetched it. Returns the records' highest timestamp (the batch's true
    maxTimestamp) and the records, for the other checks to reuse."""
    _, records = decode_batch(buf, pos, max_size=max_size)
    highest = NO_TIMESTAMP
    for index, record in enumerate(records):
        if record.offset != index:
            raise CorruptRecordError(f"record {index} has offset delta {record.offset}")
        if record.timestamp > highest:
            highest = record.timestamp
    return highest, records


def _read_len(data: bytes, pos: int) -> tuple[int, int]:
    z = data[pos]
    pos += 1
    if z >= 0x80:
        z, pos = varint32_tail(data, pos, z)
    value = (z >> 1) ^ -(z & 1)
    if value < -1:
        raise CorruptRecordError(f"negative length {value} at {pos}")
    return value, pos


def reencode_batch(
    header: BatchHeader,
    records: Sequence[Record],
    *,
    compression: int | None = None,
    compression_level: int | None = None,
    base_timestamp: int | None = None,
) -> bytes:
    """Rebuild a batch from ``records`` (a subset of its own, e.g. after compaction) keeping
    every header field: offsets and last offset delta, producer id/epoch/sequence, the
    transactional and control flags, leader epoch and LogAppendTime. ``compression`` changes
    the codec (None keeps it), at ``compression_level`` (None: the codec's default);
    ``base_timestamp`` is the batch's base timestamp (the cleaner's
    delete horizon), by default the first kept record's timestamp."""
    return encode_batch(
        records,
        compression=header.compression if compression is None else compression,
        compression_level=compression_level,
        base_offset=header.base_offset,
        base_timestamp=base_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        partition_leader_epoch=header.partition_leader_epoch,
        log_append_time=header.is_log_append_time,
        append_time=header.max_timestamp,
        keep_offsets=True,
        last_offset_delta=header.last_offset_delta,
    )


def decode_batch(
    buf: Buffer, pos: int = 0, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES
) -> tuple[BatchHeader, list[Record]]:
    """Validate and decode the batch at ``pos``: its header and its records. A payload that
    decompresses to more than ``max_size`` bytes raises DecompressedTooLargeError."""
    header = validate_batch(buf, pos)
    view = memoryview(buf)[pos + HEADER_SIZE : pos + header.size]
    codec = header.compression
    count = header.records_count
    if codec == 0:
        data = bytes(view)
    elif count == 0 and not view:
        data = b""
    else:
        data = _decompress(codec, view, max_size)
        if count * MIN_RECORD_SIZE > len(data):
            raise CorruptRecordError(
                f"batch at offset {header.base_offset}: record count {count} impossible in "
                f"{len(data)} decompressed bytes"
            )
    try:
        records = _parse_records(data, count, header.base_offset, header.base_timestamp)
    except CorruptRecordError as exc:
        raise CorruptRecordError(f"batch at offset {header.base_offset}: {exc.args[0]}") from None
    except IndexError:
        raise CorruptRecordError(
            f"batch at offset {header.base_offset}: records overrun the batch"
        ) from None
    if header.is_log_append_time:
        for record in records:
            record.timestamp = header.max_timestamp
    return header, records


def batch_records(
    buf: Buffer,
    pos: int,
    index: int,
    decoded: Sequence[list[Record]] | None,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> list[Record]:
    """The records of the ``index``-th batch, at ``pos``: ``decoded[index]`` when the caller
    decoded the batches already (produce decodes each batch once and hands them to its checks),
    else :func:`decode_batch` here."""
    if decoded is not None:
        return decoded[index]
    return decode_batch(buf, pos, max_size=max_size)[1]


def decode_batches(buf: Buffer) -> Iterator[tuple[BatchHeader, list[Record]]]:
    """Decode concatenated batches; a truncated trailing batch (a fetch cut at max bytes) ends
    the iteration silently, a corrupt complete batch raises CorruptRecordError."""
    pos, n = 0, len(buf)
    while pos < n:
        size = peek_size(buf, pos)
        if size is None:
            return
        if size < HEADER_SIZE:
            raise CorruptRecordError(f"batch length {size - LOG_OVERHEAD} at {pos} below header")
        if pos + size > n:
            return
        yield decode_batch(buf, pos)
        pos += size
