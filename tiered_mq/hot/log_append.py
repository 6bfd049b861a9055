"""Append-path helpers of LocalLog: validation, leader offset assignment, roll triggers.

All work is per batch, never per record. ``Batches`` are ``(position, header)`` pairs: the byte
position of each record batch (v2) inside the caller's buffer and its parsed header. Functions
here either raise before the log is touched (CorruptRecordError, MessageTooLargeError,
InvalidTimestampError, RecordListTooLargeError) or rewrite only header fields of batches in the
caller's buffer (base offset, partition leader epoch, and for LogAppendTime the attributes, max
timestamp and CRC); none of them writes to disk, so a crash in between leaves the log as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tiered_mq.errors import (
    CorruptRecordError,
    InvalidTimestampError,
    KafkaError,
    MessageTooLargeError,
    RecordListTooLargeError,
    UnknownServerError,
    rejected_records,
)
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.hot.time_index import NO_TIMESTAMP
from tiered_mq.record.batch import (
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    assign_offset_and_epoch,
    set_attribute_flags,
    set_log_append_time,
)

INT_MAX = 2**31 - 1

Batches = Sequence[tuple[int, BatchHeader]]


class UnexpectedAppendOffsetError(KafkaError):
    """A follower append whose first offset is below the log end offset (UNKNOWN_SERVER_ERROR
    on the wire, as in Kafka)."""

    errno = UnknownServerError.errno


@dataclass(frozen=True, slots=True)
class AppendInfo:
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    valid_bytes: int
    log_append_time_ms: int = -1  # the broker's time when message.timestamp.type=LogAppendTime
    records_count: int = 0


def check_batches(
    records: bytearray | memoryview | bytes, batches: Batches, max_message_bytes: int
) -> None:
    """Batches must be non-empty, contiguous, within ``records`` and each at most
    ``max_message_bytes`` (max.message.bytes)."""
    if not batches:
        raise CorruptRecordError("no record batch in the records")
    position = batches[0][0]
    for pos, header in batches:
        if pos != position:
            raise CorruptRecordError(f"batches not contiguous at position {pos}")
        if header.size > max_message_bytes:
            raise MessageTooLargeError(
                f"batch of {header.size} bytes exceeds max.message.bytes {max_message_bytes}"
            )
        position += header.size
    if position > len(records):
        raise CorruptRecordError("batches overrun the records")


def check_timestamp(config: LogConfig, header: BatchHeader, now: int) -> None:
    """CreateTime batches must lie within message.timestamp.before/after.max.ms of ``now``
    (per batch: its first and max timestamps; a batch of one record, its record's, which the
    produce path wrote as the max). A record without a timestamp (-1, NO_TIMESTAMP) has none
    to judge and passes, as in Kafka's LogValidator."""
    before, after = config.message_timestamp_before_max_ms, config.message_timestamp_after_max_ms
    first = header.max_timestamp if header.records_count == 1 else header.base_timestamp
    if before < LONG_MAX and first != NO_TIMESTAMP and first < now - before:
        ts = first  # the first record's (producers start the batch there)
    elif after < LONG_MAX and header.max_timestamp > now + after and header.records_count == 1:
        ts = header.max_timestamp  # the one record's
    elif after < LONG_MAX and header.max_timestamp > now + after:
        raise InvalidTimestampError(f"batch timestamps out of range at {now}")  # some record's
    else:
        return
    low = now - before if before < LONG_MAX else -LONG_MAX
    high = now + after if after < LONG_MAX else LONG_MAX
    message = (
        f"Timestamp {ts} of message with offset {header.base_offset} is out of range. "
        f"The timestamp should be within [{low}, {high}]"
    )
    raise rejected_records([(0, message)], 8, timestamp=True)


def assign_leader_offsets(
    records: bytearray | memoryview,
    batches: Batches,
    base_offset: int,
    leader_epoch: int,
    config: LogConfig,
    now: int,
) -> tuple[list[tuple[int, BatchHeader]], int]:
    """Rewrite each batch's base offset (consecutive from ``base_offset``) and leader epoch in
    ``records``; with LogAppendTime also its max timestamp and timestamp-type bit, otherwise
    check its timestamps. A producer's batch flagged LogAppendTime is taken as Kafka's
    LogValidator takes it: INVALID_TIMESTAMP on a LogAppendTime topic; on a CreateTime topic
    judged by its max timestamp (every record's, under that flag) and stored as CreateTime
    (flag cleared, CRC recomputed). Returns the updated ``(position, header)`` pairs and the
    log append time (-1 unless LogAppendTime). A timestamp error may leave earlier batches
    rewritten in the buffer, but nothing is appended."""
    append_time = now if config.log_append_time else -1
    offset = base_offset
    assigned: list[tuple[int, BatchHeader]] = []
    for position, header in batches:
        assign_offset_and_epoch(records, position, offset, leader_epoch)
        producer_lat = header.is_log_append_time and not header.is_control
        if append_time >= 0:
            if producer_lat:  # Kafka's LogValidator refuses it on a LogAppendTime topic
                message = (
                    "Invalid timestamp type in message. Producer should not set timestamp "
                    "type to LogAppendTime."
                )
                errors = [(i, message) for i in range(header.records_count)]
                raise rejected_records(errors, 8, timestamp=True)
            set_log_append_time(records, position, append_time)
            header = header._replace(
                base_offset=offset,
                partition_leader_epoch=leader_epoch,
                attributes=header.attributes | TIMESTAMP_TYPE_MASK,
                max_timestamp=append_time,
            )
        else:
            if producer_lat:  # its records carry its max timestamp: judged, stored CreateTime
                check_timestamp(config, header._replace(base_timestamp=header.max_timestamp), now)
                set_attribute_flags(records, position, TIMESTAMP_TYPE_MASK, clear=True)
                header = header._replace(attributes=header.attributes & ~TIMESTAMP_TYPE_MASK)
            else:
                check_timestamp(config, header, now)
            header = header._replace(base_offset=offset, partition_leader_epoch=leader_epoch)
        assigned.append((position, header))
        offset += header.last_offset_delta + 1
    return assigned, append_time


def check_follower_offsets(batches: Batches, log_end_offset: int) -> None:
    """A follower's batches must start at or above the log end offset and not overlap."""
    expected = log_end_offset
    for _, header in batches:
        if header.base_offset < expected:
            raise UnexpectedAppendOffsetError(
                f"batch base offset {header.base_offset} below expected {expected}"
            )
        expected = header.next_offset


def check_segment_size(size: int, segment_bytes: int, partition: str) -> None:
    """Records of ``size`` bytes (the whole append, every batch) must fit in one segment of
    ``segment.bytes``, else RECORD_LIST_TOO_LARGE and nothing is appended: Kafka's
    UnifiedLog.append checks this just before it rolls, for leader and follower appends.
    ``partition`` names the log in the message (its directory, ``{topic}-{partition}``)."""
    if size > segment_bytes:
        raise RecordListTooLargeError(
            f"Message batch size is {size} bytes in append to partition {partition}, which "
            f"exceeds the maximum configured segment size of {segment_bytes}."
        )


def must_roll(
    active: LogSegment,
    config: LogConfig,
    size: int,
    n_batches: int,
    last_offset: int,
    now: int,
    max_timestamp: int = NO_TIMESTAMP,
    roll_jitter_ms: int = 0,
) -> bool:
    """Whether appending ``size`` bytes in ``n_batches`` batches ending at ``last_offset``, whose
    greatest timestamp is ``max_timestamp``, must first roll the (non-empty) active segment
    (Kafka's ``LogSegment.shouldRoll``): segment.bytes; segment.ms (on a compacted log also
    max.compaction.lag.ms: LogConfig.max_segment_ms) less the segment's ``roll_jitter_ms``
    (segment.jitter.ms), by the records' own time (LogSegment.time_waited_for_roll: their
    timestamp minus the segment's first batch's, or the wall clock when the segment has no
    timestamp); the 32-bit relative offset; or room in the offset (8 bytes/entry) or time
    (12 bytes/entry) index."""
    return active.size > 0 and (
        active.size + size > config.segment_bytes
        or active.time_waited_for_roll(now, max_timestamp) > config.max_segment_ms - roll_jitter_ms
        or last_offset - active.base_offset > INT_MAX
        or (len(active.offset_index) + n_batches) * 8 > config.segment_index_bytes
        or (len(active.time_index) + n_batches + 1) * 12 > config.segment_index_bytes
    )


def append_info(batches: Batches, size: int, append_time: int) -> AppendInfo:
    """Summary of appended batches: offsets, max timestamp and its offset, record count."""
    first, last = batches[0][1], batches[-1][1]
    max_ts, max_ts_offset, count = -1, first.base_offset, 0
    for _, header in batches:
        count += header.records_count
        if header.max_timestamp > max_ts:
            max_ts, max_ts_offset = header.max_timestamp, header.last_offset
    return AppendInfo(
        first.base_offset, last.last_offset, max_ts, max_ts_offset, size, append_time, count
    )
