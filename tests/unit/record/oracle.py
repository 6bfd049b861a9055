"""kafka-python's record code as an independent oracle for our batches."""

from __future__ import annotations

from typing import Any

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder


def kp_build(
    records: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
    codec: int = 0,
    *,
    transactional: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytes:
    """A batch built by kafka-python from ``(offset, timestamp, key, value, headers)`` rows."""
    builder = DefaultRecordBatchBuilder(
        2, codec, transactional, producer_id, producer_epoch, base_sequence, 1 << 30
    )
    for offset, ts, key, value, headers in records:
        assert builder.append(offset, ts, key, value, headers) is not None
    return bytes(builder.build())


def kp_decode(buf: bytes) -> tuple[Any, list[tuple[Any, ...]]]:
    """kafka-python's view of one batch: the batch object and its records as tuples."""
    batch = DefaultRecordBatch(bytearray(buf))
    assert batch.validate_crc()
    rows = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    return batch, rows
