"""Record batch v2 header: the fixed 61 bytes in front of every batch.

Layout (big-endian)::

    offset  field
    0       baseOffset            i64   rewritten by the broker on append
    8       batchLength           i32   bytes after this field
    12      partitionLeaderEpoch  i32   rewritten by the broker; outside the CRC
    16      magic                 i8    always 2
    17      crc                   u32   CRC-32C of bytes [21, end)
    21      attributes            i16   bits 0-2 codec, 3 LogAppendTime, 4 transactional, 5 control
    23      lastOffsetDelta       i32
    27      baseTimestamp         i64
    35      maxTimestamp          i64
    43      producerId            i64
    51      producerEpoch         i16
    53      baseSequence          i32
    57      recordsCount          i32
    61      records ...

Reading a header touches no record: this is the broker's per-batch fast path.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

import crc32c

from tiered_mq.errors import CorruptRecordError

HEADER = struct.Struct(">qiiBIhiqqqhii")
HEADER_SIZE: Final = 61
LOG_OVERHEAD: Final = 12  # baseOffset + batchLength: bytes not counted in batchLength
CRC_START: Final = 21
MAGIC: Final = 2
# Smallest possible record is 7 bytes; a count above this bound for the batch size is absurd.
MIN_RECORD_SIZE: Final = 7

_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LEADER_EPOCH = struct.Struct(">i")
_BASE_OFFSET = struct.Struct(">q")

COMPRESSION_MASK: Final = 0x07
TIMESTAMP_TYPE_MASK: Final = 0x08
TRANSACTIONAL_FLAG: Final = 0x10
CONTROL_FLAG: Final = 0x20
DELETE_HORIZON_FLAG: Final = 0x40

NO_PRODUCER_ID: Final = -1
NO_SEQUENCE: Final = -1


class BatchHeader(NamedTuple):
    """The decoded 61-byte header of one batch (a NamedTuple: built once per batch on the
    append path, it costs a tuple, where a frozen dataclass sets 13 attributes one by one).
    ``_replace`` gives a copy with some fields changed."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Total bytes of the batch on the wire and on disk."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def delete_horizon(self) -> int | None:
        """The log cleaner's delete horizon (KIP-534: the base timestamp, when the batch has
        DELETE_HORIZON_FLAG), else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Decode the header at ``pos`` without validating it (see :func:`validate_batch`)."""
    if len(buf) - pos < HEADER_SIZE:
        raise CorruptRecordError(f"truncated batch header at {pos}: {len(buf) - pos} bytes")
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def peek_size(buf: bytes | bytearray | memoryview, pos: int = 0) -> int | None:
    """The full size of the batch at ``pos`` from its first 12 bytes, or None if fewer are there."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    _, length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
    return int(length) + LOG_OVERHEAD


def validate_batch(
    buf: bytes | bytearray | memoryview, pos: int = 0, *, counts: bool = True
) -> BatchHeader:
    """Check one batch at ``pos``: length, magic, CRC-32C, a record count the records' bytes
    can hold and (``counts``) a record count and last offset delta that are not negative.

    Raises CorruptRecordError naming what is wrong; reads no record. The produce path passes
    ``counts=False`` and judges the signs itself, after the CRC as Kafka's LogValidator does
    (INVALID_RECORD: a CRC-valid batch with a negative count is the producer's mistake, not a
    corruption).
    """
    header = read_header(buf, pos)
    if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError(f"batch length {header.batch_length} below header size")
    end = pos + header.size
    if end > len(buf):
        raise CorruptRecordError(f"batch of {header.size} bytes truncated at {len(buf) - pos}")
    if header.magic != MAGIC:
        raise CorruptRecordError(f"unsupported magic {header.magic}")
    actual = crc32c.crc32c(memoryview(buf)[pos + CRC_START : end])
    if actual != header.crc:
        raise CorruptRecordError(
            f"CRC mismatch: header {header.crc:#010x}, computed {actual:#010x}"
        )
    if counts and (header.records_count < 0 or header.last_offset_delta < 0):
        raise CorruptRecordError(
            f"negative record count {header.records_count} or last offset delta "
            f"{header.last_offset_delta}"
        )
    body = header.size - HEADER_SIZE
    if header.compression == 0 and header.records_count * MIN_RECORD_SIZE > body:
        raise CorruptRecordError(
            f"record count {header.records_count} impossible in {body} bytes of records"
        )
    return header


def iter_batches(
    buf: bytes | bytearray | memoryview, validate: bool = True
) -> list[tuple[int, BatchHeader]]:
    """Split concatenated batches into ``(position, header)`` pairs.

    With ``validate`` every batch is checked (see :func:`validate_batch`); a trailing partial
    batch raises CorruptRecordError.
    """
    out: list[tuple[int, BatchHeader]] = []
    pos, n = 0, len(buf)
    while pos < n:
        header = validate_batch(buf, pos) if validate else read_header(buf, pos)
        out.append((pos, header))
        pos += header.size
    return out


def assign_offset_and_epoch(
    buf: bytearray | memoryview, pos: int, base_offset: int, leader_epoch: int
) -> None:
    """Rewrite baseOffset and partitionLeaderEpoch in place; both lie outside the CRC."""
    _BASE_OFFSET.pack_into(buf, pos, base_offset)
    _LEADER_EPOCH.pack_into(buf, pos + 12, leader_epoch)


_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMP = struct.Struct(">q")
_CRC = struct.Struct(">I")


def set_log_append_time(buf: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Stamp the batch at ``pos`` with LogAppendTime ``timestamp`` (``message.timestamp.type``).

    Sets attribute bit 3 and maxTimestamp, then recomputes the CRC-32C; records are untouched
    (readers report maxTimestamp for every record of such a batch). The batch must be validated.
    """
    _TIMESTAMP.pack_into(buf, pos + 35, timestamp)
    set_attribute_flags(buf, pos, TIMESTAMP_TYPE_MASK)


def set_max_timestamp(buf: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Set the maxTimestamp of the batch at ``pos`` to ``timestamp`` and recompute its
    CRC-32C (the batch must be validated)."""
    _TIMESTAMP.pack_into(buf, pos + 35, timestamp)
    set_attribute_flags(buf, pos, 0)


def set_attribute_flags(
    buf: bytearray | memoryview, pos: int, flags: int, *, clear: bool = False
) -> None:
    """Set (or with ``clear``, clear) attribute bits ``flags`` of the batch at ``pos`` and
    recompute its CRC-32C (which also covers any other field the caller rewrote in
    [21, end) before)."""
    header = read_header(buf, pos)
    attributes = header.attributes & ~flags if clear else header.attributes | flags
    _ATTRIBUTES.pack_into(buf, pos + 21, attributes)
    crc = crc32c.crc32c(memoryview(buf)[pos + CRC_START : pos + header.size])
    _CRC.pack_into(buf, pos + 17, crc)
