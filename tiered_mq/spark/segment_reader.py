"""Executor side: one split (a byte range of a ``.log`` object) -> Arrow record batches.

Steps, all per batch except the column decode (see columnar.py):

1. one GET of the split's bytes (a ranged GET unless the split is the whole object; a whole
   object is checked against the manifest's CRC-32C of the .log);
2. walk the 61-byte batch headers; a header that does not fit the bytes is corruption;
3. read_committed: find the batches of aborted transactions (transactions.py);
4. skip control batches, aborted batches, batches outside ``[start_offset, end_offset)``,
   batches whose max timestamp is below a pushed-down bound or the start timestamp;
5. check each remaining batch's CRC-32C, decompress its payload, collect payloads into runs of
   about :data:`RUN_BYTES` and decode each run into one Arrow batch;
6. cut the rows at the exact offsets and at the start / end timestamps.

Any corruption (bad CRC, bad lengths, an object shorter than the manifest says, undecodable
payload) raises LogCorruptionError whose message starts with the object's full name
(``s3://bucket/key``) and position: the Spark task, and so the job, fails with it. Nothing is
retried past corruption.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import crc32c
import numpy as np
import pyarrow as pa

from tiered_mq.errors import CorruptRecordError, LogCorruptionError, ObjectNotFoundError
from tiered_mq.record.batch import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    read_header,
    validate_batch,
)
from tiered_mq.record.compression import decompress
from tiered_mq.spark.bucket import Bucket
from tiered_mq.spark.columnar import PayloadRun, decode_run
from tiered_mq.spark.transactions import Lookahead, aborted_batches, first_markers

if TYPE_CHECKING:  # planner.py imports this module (through stable_offset.py)
    from tiered_mq.spark.planner import SegmentSplit

RUN_BYTES: Final = 4 * 1024 * 1024


def fetch(bucket: Bucket, split: SegmentSplit) -> bytes:
    """The split's bytes: the whole object (checked against the manifest's CRC-32C), or a
    ranged GET that must return exactly the range's length. A short range (an object shorter
    than the manifest's ``size_bytes``) is corruption: cut at a batch boundary it would
    otherwise look like a valid log and lose its last batches without an error."""
    name = bucket.url.describe(split.log_key)
    if split.start_position == 0 and split.end_position is None:
        data = bucket.get(split.log_key)
        if split.object_crc32c is not None and crc32c.crc32c(data) != split.object_crc32c:
            raise LogCorruptionError(
                name,
                0,
                f"CRC-32C of the object is {crc32c.crc32c(data):#010x}, "
                f"the manifest says {split.object_crc32c:#010x}",
            )
        if split.size_bytes and len(data) != split.size_bytes:
            raise LogCorruptionError(
                name, 0, f"the object is {len(data)} bytes, the manifest says {split.size_bytes}"
            )
        return data
    end = split.size_bytes if split.end_position is None else split.end_position
    data = bucket.get_range(split.log_key, split.start_position, end - 1)
    check_length(data, name, split.start_position, end, split.size_bytes)
    return data


def check_length(
    data: bytes, name: str, start: int, end: int, size_bytes: int | None = None
) -> None:
    """A ranged read of bytes ``[start, end)`` must return ``end - start`` bytes. Fewer (an
    object shorter than the manifest says: truncated, or replaced) is corruption: cut at a batch
    boundary the bytes would otherwise walk as a valid log that lost its last batches (and, in
    a read_committed look-ahead, their transaction markers) without an error."""
    if len(data) != end - start:
        size = end if size_bytes is None else size_bytes
        raise LogCorruptionError(
            name,
            start + len(data),
            f"the object ends early: a read of bytes [{start}, {end}) returned {len(data)} "
            f"bytes (the manifest says the object is {size} bytes)",
        )


def read_split(bucket: Bucket, split: SegmentSplit) -> Iterator[pa.RecordBatch]:
    """The split's rows. A ``.log`` object missing now (deleted by retention after the job was
    planned) raises ObjectNotFoundError, or yields nothing with ``failOnDataLoss=false``."""
    name = bucket.url.describe(split.log_key)
    try:
        data = fetch(bucket, split)
    except ObjectNotFoundError as exc:
        if not split.fail_on_data_loss:
            return
        raise ObjectNotFoundError(
            name,
            "the segment is no longer in the bucket (deleted by retention after the job was "
            "planned?). Set failOnDataLoss=false to skip deleted segments",
        ) from exc
    yield from decode_split(data, split, name, lambda pids: _look_ahead(bucket, split, pids))


def _look_ahead(bucket: Bucket, split: SegmentSplit, producer_ids: set[int]) -> dict[int, bool]:
    """Markers of ``producer_ids`` in the byte ranges after the split (read_committed)."""
    found: dict[int, bool] = {}
    for key, start, end in split.later:
        name = bucket.url.describe(key)
        try:
            data = bucket.get_range(key, start, end - 1)
        except ObjectNotFoundError:
            if split.fail_on_data_loss:
                raise
            continue  # deleted by retention after planning: its markers are gone
        check_length(data, name, start, end)
        try:
            batches = walk_headers(data, name, start)
            found.update(first_markers(data, batches, producer_ids - set(found)))
        except CorruptRecordError as exc:
            raise LogCorruptionError(bucket.url.describe(key), start, str(exc)) from exc
        if len(found) == len(producer_ids):
            break
    return found


def walk_headers(data: bytes, name: str, base_position: int) -> list[tuple[int, BatchHeader]]:
    out: list[tuple[int, BatchHeader]] = []
    pos, n = 0, len(data)
    while pos < n:
        if n - pos < HEADER_SIZE:
            raise LogCorruptionError(name, base_position + pos, f"{n - pos} trailing bytes")
        header = read_header(data, pos)
        if header.batch_length < HEADER_SIZE - LOG_OVERHEAD or pos + header.size > n:
            raise LogCorruptionError(
                name, base_position + pos, f"batch length {header.batch_length} does not fit"
            )
        out.append((pos, header))
        pos += header.size
    return out


@dataclass
class _Cuts:
    """Row-level state across the runs of one split."""

    start_offset: int
    end_offset: int
    start_timestamp: int | None
    end_timestamp: int | None
    stopped: bool = False

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        offsets = batch.column(4).to_numpy()
        keep = (offsets >= self.start_offset) & (offsets < self.end_offset)
        if self.start_timestamp is not None or self.end_timestamp is not None:
            # records below the split's start (deleted, or read from an earlier split) count
            # for neither boundary, as Kafka's ListOffsets searches from the log start on
            ts = batch.column(5).cast(pa.int64()).to_numpy() // 1000
            ts = np.where(offsets >= self.start_offset, ts, np.iinfo(np.int64).min)
            if self.start_timestamp is not None:
                hits = np.nonzero(ts >= self.start_timestamp)[0]
                if len(hits):
                    keep[: hits[0]] = False
                    self.start_timestamp = None  # started: later rows all qualify
                else:
                    keep[:] = False
            if self.end_timestamp is not None:
                hits = np.nonzero(ts >= self.end_timestamp)[0]
                if len(hits):
                    keep[hits[0] :] = False
                    self.stopped = True
        if keep.all():
            return batch
        return batch.filter(pa.array(keep))


def decode_split(
    data: bytes, split: SegmentSplit, name: str, lookahead: Lookahead | None = None
) -> Iterator[pa.RecordBatch]:
    batches = walk_headers(data, name, split.start_position)
    aborted: set[int] = set()
    if split.read_committed:
        try:
            aborted = aborted_batches(data, batches, split.aborted, lookahead)
        except CorruptRecordError as exc:
            raise LogCorruptionError(name, split.start_position, str(exc)) from exc
    cuts = _Cuts(split.start_offset, split.end_offset, split.start_timestamp, split.end_timestamp)
    min_ts = None if split.min_timestamp_us is None else split.min_timestamp_us // 1000
    waiting_for = split.start_timestamp
    run = PayloadRun()
    first_pos = 0
    for i, (pos, header) in enumerate(batches):
        if header.is_control or i in aborted or header.records_count == 0:
            continue
        if header.last_offset < split.start_offset:
            continue
        if header.base_offset >= split.end_offset:
            break
        if min_ts is not None and header.max_timestamp < min_ts:
            continue
        if waiting_for is not None:
            if header.max_timestamp < waiting_for:
                continue  # wholly before the start timestamp
            waiting_for = None  # this batch holds the first record at or after it
        try:
            validate_batch(data, pos)
            payload = memoryview(data)[pos + HEADER_SIZE : pos + header.size]
            run.add(header, decompress(header.compression, payload))
        except CorruptRecordError as exc:
            raise LogCorruptionError(name, split.start_position + pos, str(exc)) from exc
        if not run.headers[1:]:
            first_pos = pos
        if run.nbytes >= RUN_BYTES:
            yield from _flush(run, split, cuts, name, first_pos)
            run = PayloadRun()
            if cuts.stopped:
                return
    if run.headers:
        yield from _flush(run, split, cuts, name, first_pos)


def _flush(
    run: PayloadRun, split: SegmentSplit, cuts: _Cuts, name: str, first_pos: int
) -> Iterator[pa.RecordBatch]:
    try:
        batch = decode_run(run, split.topic, split.partition)
    except CorruptRecordError as exc:
        raise LogCorruptionError(name, split.start_position + first_pos, str(exc)) from exc
    batch = cuts.apply(batch)
    if batch.num_rows:
        yield batch
