"""Batch header helpers: reading, validating, splitting and rewriting batches in place."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.batch import (
    HEADER_SIZE,
    assign_offset_and_epoch,
    iter_batches,
    peek_size,
    read_header,
    set_log_append_time,
    validate_batch,
)
from tiered_mq.record.records import decode_batch, encode_batch


def _batch(n: int, base_offset: int = 0, codec: int = 0) -> bytes:
    rows = [(f"k{i}".encode(), b"v" * i, [], 100 + i) for i in range(n)]
    return encode_batch(rows, base_offset=base_offset, compression=codec)


def test_assign_offset_and_epoch_keeps_crc_valid(codec: int) -> None:
    buf = bytearray(_batch(3, codec=codec) + _batch(2, codec=codec))
    second = peek_size(buf, 0)
    assert second is not None
    assign_offset_and_epoch(buf, 0, 500, 7)
    assign_offset_and_epoch(buf, second, 503, 7)
    headers = iter_batches(buf)
    assert [(pos, h.base_offset, h.partition_leader_epoch) for pos, h in headers] == [
        (0, 500, 7),
        (second, 503, 7),
    ]
    _, records = decode_batch(buf, second)
    assert [r.offset for r in records] == [503, 504]
    assert DefaultRecordBatch(buf[second:]).leader_epoch == 7


def test_peek_size_needs_twelve_bytes() -> None:
    raw = _batch(1)
    assert peek_size(raw) == len(raw)
    assert peek_size(raw[:11]) is None
    assert peek_size(raw, len(raw)) is None


def test_iter_batches_rejects_trailing_partial_batch_when_validating() -> None:
    raw = _batch(2) + _batch(1, base_offset=2)
    assert len(iter_batches(raw)) == 2
    with pytest.raises(CorruptRecordError):
        iter_batches(raw[:-1])
    # Without validation a bad CRC passes: the headers are still read.
    damaged = bytearray(raw)
    damaged[-1] ^= 0xFF
    assert [h.base_offset for _, h in iter_batches(damaged, validate=False)] == [0, 2]


def test_read_header_on_short_buffer() -> None:
    with pytest.raises(CorruptRecordError, match="truncated batch header"):
        read_header(b"\x00" * (HEADER_SIZE - 1))


def test_set_log_append_time(codec: int) -> None:
    buf = bytearray(b"junk" + _batch(3, codec=codec))
    set_log_append_time(buf, 4, 99_000)
    header = validate_batch(buf, 4)
    assert header.is_log_append_time and header.max_timestamp == 99_000
    assert header.base_timestamp == 100 and header.compression == codec
    _, records = decode_batch(buf, 4)
    assert [r.timestamp for r in records] == [99_000] * 3
    kp = DefaultRecordBatch(buf[4:])
    assert kp.validate_crc() and [r.timestamp for r in kp] == [99_000] * 3
