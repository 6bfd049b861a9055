"""Produce-time check of every record's timestamp against message.timestamp.before.max.ms.

Kafka's LogValidator judges each record of a CreateTime batch: a timestamp (other than -1,
none) below ``now - message.timestamp.before.max.ms`` or above ``now +
message.timestamp.after.max.ms`` fails the whole batch with INVALID_TIMESTAMP. The append path
(log_append.check_timestamp) judges a batch by its header alone: its first timestamp and its
max timestamp. That settles the after bound (no record is above the max timestamp) and, for
records in time order, the before bound; but a producer may stamp a batch out of order, and a
record after the first may be the oldest. So when a topic sets ``before.max.ms`` (the default,
Long.MAX_VALUE, never refuses) every data batch is decoded (in the produce handler's worker
thread): the records of a batch of several are each judged here, and a one-record batch gets
its record's timestamp written as its max timestamp (handlers/produce.py), which
``check_timestamp`` then judges. But a max timestamp stays -1 (NO_TIMESTAMP) when the record's
is below it, as Kafka computes it (the highest of -1 and the records'): a one-record batch whose
max timestamp is -1 has its record judged here, so that a timestamp below -1 is refused as
Kafka's LogValidator refuses it (any timestamp but -1 is judged). Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Sequence

from tiered_mq.errors import rejected_records
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.record.records import NO_TIMESTAMP, Record, batch_records


def needs_record_check(config: LogConfig, batches: Sequence[tuple[int, BatchHeader]]) -> bool:
    """Whether some batch's records must be decoded to judge their timestamps: a CreateTime
    topic with ``message.timestamp.before.max.ms`` set and a data batch (a record's timestamp
    is baseTimestamp + its delta, so even one record's may differ from the header's)."""
    return (
        not config.log_append_time
        and config.message_timestamp_before_max_ms < LONG_MAX
        and any(not h.is_control for _, h in batches)
    )


def check_record_timestamps(
    records: bytes | bytearray | memoryview,
    batches: Sequence[tuple[int, BatchHeader]],
    config: LogConfig,
    now: int,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    decoded: Sequence[list[Record]] | None = None,
) -> None:
    """Raise InvalidTimestampError when a record's timestamp lies outside
    ``[now - before.max.ms, now + after.max.ms]``, naming each such record (Kafka's message) in
    the error's ``record_errors``. ``decoded``: the batches' records when the caller decoded
    them already (else decoded here)."""
    low = now - config.message_timestamp_before_max_ms
    after = config.message_timestamp_after_max_ms
    high = now + after if after < LONG_MAX else LONG_MAX
    out_of_range: list[tuple[int, str]] = []
    for i, (position, header) in enumerate(batches):
        if header.is_control or (
            header.records_count <= 1 and header.max_timestamp != NO_TIMESTAMP
        ):
            continue  # one record: the header's max timestamp is that record's (see above)
        for index, record in enumerate(
            batch_records(records, position, i, decoded, max_size=max_size)
        ):
            ts = record.timestamp
            if ts != NO_TIMESTAMP and not low <= ts <= high:
                out_of_range.append(
                    (
                        index,
                        f"Timestamp {ts} of message with offset {record.offset} is out of "
                        f"range. The timestamp should be within [{low}, {high}]",
                    )
                )
    if out_of_range:
        raise rejected_records(out_of_range, 8, timestamp=True)
