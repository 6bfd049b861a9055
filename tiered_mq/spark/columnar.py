"""Column-at-a-time decoding of record batches into Arrow record batches.

Output schema: Spark's Kafka source with ``includeHeaders=true`` (:data:`ARROW_SCHEMA`,
:data:`SPARK_SCHEMA`)::

    key            binary      null for a null key
    value          binary      null for a null value (a tombstone)
    topic          string
    partition      int
    offset         long        baseOffset + offsetDelta
    timestamp      timestamp   ms -> us, UTC; maxTimestamp for LogAppendTime batches
    timestampType  int         0 CreateTime, 1 LogAppendTime
    headers        array<struct<key:string,value:binary>>, null when a record has none

How (the hot path of a Spark replay): the payloads of a run of batches (decompressed) are
concatenated into one buffer; one Python loop per record finds only where each record body
starts (its length varint, usually one or two bytes); every field after that is decoded for all
records at once with numpy (vectorised varints), and the key and value columns are gathered
from the buffer with one boolean mask each, then wrapped as Arrow arrays without copying
again. Only records that carry headers are parsed one by one.

Invariants checked: each record stays inside its declared length, the records of a batch fill
its payload exactly and their count matches the header's. A violation raises
CorruptRecordError naming the batch's base offset; the caller adds the object key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pyarrow as pa

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.records import parse_headers
from tiered_mq.record.varint import varint_tail, zigzag_decode

HEADER_TYPE: Final = pa.struct([("key", pa.string()), ("value", pa.binary())])
ARROW_SCHEMA: Final = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("timestampType", pa.int32()),
        ("headers", pa.list_(HEADER_TYPE)),
    ]
)
SPARK_SCHEMA: Final = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int, headers array<struct<key:string,value:binary>>"
)
_PAD: Final = 16  # zero bytes after the buffer: a vectorised varint read never runs off its end


@dataclass
class PayloadRun:
    """Decompressed payloads of consecutive batches, waiting to become one Arrow batch."""

    payloads: list[bytes] = field(default_factory=list)
    headers: list[BatchHeader] = field(default_factory=list)
    records: int = 0
    nbytes: int = 0

    def add(self, header: BatchHeader, payload: bytes) -> None:
        self.payloads.append(payload)
        self.headers.append(header)
        self.records += header.records_count
        self.nbytes += len(payload)


def _length_tables() -> tuple[list[int], list[int]]:
    """Record length varint -> bytes to the next record: one-byte (index = byte) and two-byte
    (index = byte0 | byte1 << 8) forms; 0 marks a longer varint."""
    one = [1 + zigzag_decode(z) for z in range(0x80)]
    two = [0] * 0x10000
    for b0 in range(0x80, 0x100):
        for b1 in range(0x80):
            z = (b0 & 0x7F) | (b1 << 7)
            two[b0 | (b1 << 8)] = 2 + zigzag_decode(z)
    return one, two


_STEP_ONE, _STEP_TWO = _length_tables()


def _record_starts(data: bytes, n: int) -> tuple[list[int], int]:
    """Where each of ``n`` chained records starts (its length varint), and where the chain ends.

    The only per-record Python loop of the decoder: a table lookup per record. A corrupt length
    sends the chain astray; the caller's checks (batch boundaries, final position) catch it.
    """
    starts = [0] * n
    one, two = _STEP_ONE, _STEP_TWO
    pos = 0
    try:
        for i in range(n):
            starts[i] = pos
            z = data[pos]
            if z < 0x80:
                pos += one[z]
            else:
                step = two[z | (data[pos + 1] << 8)]
                if step:
                    pos += step
                else:
                    length, after = varint_tail(data, pos + 1, z)
                    pos = after + ((length >> 1) ^ -(length & 1))
            if pos < 0:
                raise CorruptRecordError(f"negative record length at {starts[i]}")
    except IndexError:
        raise CorruptRecordError("records overrun the batch") from None
    return starts, pos


def _corrupt(header: BatchHeader, what: str) -> Exception:
    return CorruptRecordError(f"batch at offset {header.base_offset}: {what}")


def _varints(arr: np.ndarray[Any, Any], pos: np.ndarray[Any, Any]) -> tuple[Any, Any]:
    """Zigzag varints at every position of ``pos``: (values int64, sizes int64)."""
    b = arr[pos].astype(np.uint64)
    value = b & np.uint64(0x7F)
    size = np.ones(len(pos), dtype=np.int64)
    more = np.nonzero(b >= 0x80)[0]
    shift = 7
    while len(more):
        if shift > 63:
            raise CorruptRecordError("varint longer than 10 bytes")
        nb = arr[pos[more] + size[more]].astype(np.uint64)
        value[more] |= (nb & np.uint64(0x7F)) << np.uint64(shift)
        size[more] += 1
        more = more[nb >= 0x80]
        shift += 7
    signed = (value >> np.uint64(1)).view(np.int64) ^ -(value & np.uint64(1)).view(np.int64)
    return signed, size


def _gather(arr: np.ndarray[Any, Any], starts: Any, lengths: Any, nulls: Any) -> pa.Array:
    """A binary column of ``arr[starts[i] : starts[i] + lengths[i]]`` (null where ``nulls``).

    The spans are ordered and disjoint: one ``np.repeat`` draws the mask of their bytes.
    """
    n = len(starts)
    lengths = np.where(nulls, 0, lengths)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise ValueError("column chunk over 2 GiB; lower the run size")
    runs = np.empty(2 * n + 1, dtype=np.int64)
    span_ends = starts + lengths
    runs[0] = starts[0] if n else 0
    runs[2:-1:2] = starts[1:] - span_ends[:-1]
    runs[1::2] = lengths
    runs[-1] = len(arr) - (span_ends[-1] if n else 0)
    keep = np.zeros(2 * n + 1, dtype=np.bool_)
    keep[1::2] = True
    data = arr[np.repeat(keep, runs)]
    null_count = int(np.count_nonzero(nulls))
    validity = pa.py_buffer(np.packbits(~nulls, bitorder="little")) if null_count else None
    return pa.Array.from_buffers(
        pa.binary(),
        n,
        [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
        null_count=null_count,
    )


def _constant_string(value: str, n: int) -> pa.Array:
    raw = value.encode()
    offsets = np.arange(n + 1, dtype=np.int32) * len(raw)
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw * n)]
    )


def _headers_column(data: bytes, hstarts: Any, hcounts: Any, ends: Any, n: int) -> pa.Array:
    """The headers column: records with a header count of 0 get null, others parsed in Python."""
    with_headers = np.nonzero(hcounts != 0)[0]
    if not len(with_headers):
        return pa.nulls(n, pa.list_(HEADER_TYPE))
    keys: list[str] = []
    values: list[bytes | None] = []
    counts = np.zeros(n, dtype=np.int32)
    for i in with_headers.tolist():
        count = int(hcounts[i])
        start = int(hstarts[i])
        end = int(ends[i])
        try:
            headers, pos = parse_headers(data, start, count, end)
        except IndexError:
            raise CorruptRecordError(f"headers overrun the record at {start}") from None
        for key, value in headers:
            keys.append(key)
            values.append(value)
        if pos != end:
            raise CorruptRecordError(f"record headers overrun the record by {pos - end} bytes")
        counts[i] = count
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    struct = pa.StructArray.from_arrays(
        [pa.array(keys, pa.string()), pa.array(values, pa.binary())], fields=list(HEADER_TYPE)
    )
    mask = pa.array(hcounts == 0)
    return pa.ListArray.from_arrays(pa.array(offsets), struct, mask=mask)


def decode_run(run: PayloadRun, topic: str, partition: int) -> pa.RecordBatch:
    """Decode the records of ``run`` into one Arrow batch of :data:`ARROW_SCHEMA`."""
    n = run.records
    data = b"".join(run.payloads)
    starts_list, end = _record_starts(data, n)
    counts = np.array([h.records_count for h in run.headers], dtype=np.int64)
    sizes = np.array([len(p) for p in run.payloads], dtype=np.int64)
    first_record = np.cumsum(counts) - counts
    payload_start = np.cumsum(sizes) - sizes
    starts = np.array(starts_list, dtype=np.int64)
    arr = np.frombuffer(data + bytes(_PAD), dtype=np.uint8)
    with_records = counts > 0
    if end != len(data) or not np.array_equal(
        starts[first_record[with_records]], payload_start[with_records]
    ):
        bad = _first_misaligned(run, starts, first_record, payload_start)
        raise _corrupt(bad, "records do not fill the batch payload exactly")
    ends = np.empty(n, dtype=np.int64)
    ends[:-1] = starts[1:]
    if n:
        ends[-1] = end

    length, s0 = _varints(arr, starts)
    body = starts + s0
    ts_delta, s1 = _varints(arr, body + 1)
    pos = body + 1 + s1
    off_delta, s2 = _varints(arr, pos)
    pos += s2
    key_len, s3 = _varints(arr, pos)
    key_start = pos + s3
    key_null = key_len == -1
    # Corrupt lengths may point anywhere: clamp into the zero padding; the checks below fail.
    limit = len(data)
    pos = np.clip(key_start + np.where(key_null, 0, key_len), 0, limit)
    value_len, s4 = _varints(arr, pos)
    value_start = pos + s4
    value_null = value_len == -1
    pos = np.clip(value_start + np.where(value_null, 0, value_len), 0, limit)
    hcount, s5 = _varints(arr, pos)
    hstart = pos + s5
    bad = (length < 6) | (key_len < -1) | (value_len < -1) | (hstart > ends)
    bad |= (hcount == 0) & (hstart != ends)
    if bad.any():
        i = int(np.argmax(bad))
        header = run.headers[int(np.searchsorted(first_record, i, side="right")) - 1]
        raise _corrupt(header, "a record overruns its declared length")

    base_offset = np.repeat(np.array([h.base_offset for h in run.headers], np.int64), counts)
    base_ts = np.repeat(np.array([h.base_timestamp for h in run.headers], np.int64), counts)
    append_time = np.repeat(np.array([h.is_log_append_time for h in run.headers]), counts)
    max_ts = np.repeat(np.array([h.max_timestamp for h in run.headers], np.int64), counts)
    timestamps = np.where(append_time, max_ts, base_ts + ts_delta)

    columns = [
        _gather(arr, key_start, key_len, key_null),
        _gather(arr, value_start, value_len, value_null),
        _constant_string(topic, n),
        pa.array(np.full(n, partition, dtype=np.int32)),
        pa.array(base_offset + off_delta),
        pa.array(timestamps * 1000, type=pa.timestamp("us", tz="UTC")),
        pa.array(append_time.astype(np.int32)),
        _headers_column(data, hstart, hcount, ends, n),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def _first_misaligned(
    run: PayloadRun, starts: Any, first_record: Any, payload_start: Any
) -> BatchHeader:
    for header, first, begin in zip(run.headers, first_record, payload_start, strict=True):
        if header.records_count and starts[first] != begin:
            return header
    return run.headers[-1]
