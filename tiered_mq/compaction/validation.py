"""Produce-time check for compacted topics: every record needs a key (Kafka's LogValidator).

A compacted log keeps the latest record *per key*, so Kafka rejects a batch holding a record
with a null key when the topic's ``cleanup.policy`` contains ``compact``: INVALID_RECORD for
produce v8+ (KIP-467), CORRUPT_MESSAGE for older versions. This is the one place where the
broker inspects records on the produce path, and only for compacted topics (as Kafka does).
Payloads decompress to at most ``max_size`` bytes (the broker's
``message.max.decompressed.bytes``), else DecompressedTooLargeError (MESSAGE_TOO_LARGE).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tiered_mq.errors import CorruptRecordError, InvalidRecordError
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.record.records import decode_batch

INVALID_RECORD_MIN_VERSION: Final = 8


def require_keys(
    records: bytes | bytearray | memoryview,
    batches: Sequence[tuple[int, BatchHeader]],
    api_version: int,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> None:
    """Raise when a data record in ``batches`` has no key (control batches are the broker's)."""
    for position, header in batches:
        if header.is_control:
            continue
        for record in decode_batch(records, position, max_size=max_size)[1]:
            if record.key is None:
                delta = record.offset - header.base_offset
                message = f"compacted topic cannot accept a record without key (delta {delta})"
                if api_version >= INVALID_RECORD_MIN_VERSION:
                    raise InvalidRecordError(message)
                raise CorruptRecordError(message)
