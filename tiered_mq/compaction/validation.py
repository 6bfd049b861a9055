"""Produce-time check for compacted topics: every record needs a key (Kafka's LogValidator).

A compacted log keeps the latest record *per key*, so Kafka rejects a batch holding a record
with a null key when the topic's ``cleanup.policy`` contains ``compact``: INVALID_RECORD for
produce v8+ (KIP-467), CORRUPT_MESSAGE for older versions (:func:`invalid_record`). The
records' offset deltas must also rise strictly (with the batch's count check, that makes them
0..count-1), or the log cleaner could not write the batch again (the produce path checks
that for every topic first: records.check_records).
Payloads decompress to at most ``max_size`` bytes (the broker's
``message.max.decompressed.bytes``), else DecompressedTooLargeError (MESSAGE_TOO_LARGE).
"""

from __future__ import annotations

from collections.abc import Sequence

from tiered_mq.errors import invalid_record, rejected_records
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.record.records import Record, batch_records


def require_keys(
    records: bytes | bytearray | memoryview,
    batches: Sequence[tuple[int, BatchHeader]],
    api_version: int,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    decoded: Sequence[list[Record]] | None = None,
) -> None:
    """Raise when a data record in ``batches`` has no key (control batches are the broker's),
    naming every such record in the error's ``record_errors``, as Kafka does. ``decoded``: the
    batches' records when the caller decoded them already (else decoded here)."""
    missing: list[tuple[int, str]] = []
    for i, (position, header) in enumerate(batches):
        if header.is_control:
            continue
        previous = -1
        for index, record in enumerate(
            batch_records(records, position, i, decoded, max_size=max_size)
        ):
            delta = record.offset - header.base_offset
            if record.key is None:
                missing.append((index, "Compacted topic cannot accept message without key"))
            if delta <= previous:
                raise invalid_record(f"record offset delta {delta} after {previous}", api_version)
            previous = delta
    if missing:
        raise rejected_records(missing, api_version)
