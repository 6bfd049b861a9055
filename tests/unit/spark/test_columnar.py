from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.batch import HEADER_SIZE, read_header
from tiered_mq.record.compression import decompress
from tiered_mq.record.records import decode_batch, encode_batch, encode_varint
from tiered_mq.spark.columnar import ARROW_SCHEMA, PayloadRun, decode_run


def run_of(batches: list[bytes]) -> PayloadRun:
    run = PayloadRun()
    for b in batches:
        h = read_header(b)
        run.add(h, decompress(h.compression, b[HEADER_SIZE:]))
    return run


def rows_of(batch: object) -> list[tuple[object, ...]]:
    d = batch.to_pydict()  # type: ignore[attr-defined]
    out = []
    for i in range(len(d["offset"])):
        ts = d["timestamp"][i]
        headers = d["headers"][i]
        out.append(
            (
                d["offset"][i],
                round(ts.timestamp() * 1000),
                d["key"][i],
                d["value"][i],
                [] if headers is None else [(h["key"], h["value"]) for h in headers],
                d["timestampType"][i],
                d["topic"][i],
                d["partition"][i],
            )
        )
    return out


def reference(batches: list[bytes]) -> list[tuple[object, ...]]:
    out = []
    for b in batches:
        header, records = decode_batch(b)
        for r in records:
            out.append(
                (
                    r.offset,
                    r.timestamp,
                    r.key,
                    r.value,
                    list(r.headers),
                    int(header.is_log_append_time),
                    "t",
                    7,
                )
            )
    return out


payloads = st.one_of(st.none(), st.binary(max_size=300))
header_lists = st.lists(
    st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20))), max_size=3
)
records = st.lists(
    st.tuples(payloads, payloads, header_lists, st.integers(-(2**40), 2**42)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(records, min_size=1, max_size=4),
    st.integers(0, 4),
    st.booleans(),
)
def test_matches_record_decoder(
    batch_rows: list[list[tuple[object, ...]]], codec: int, append_time: bool
) -> None:
    batches, base = [], 0
    for rows in batch_rows:
        batches.append(
            encode_batch(
                rows,
                compression=codec,
                base_offset=base,
                log_append_time=append_time,
                append_time=1_700_000_000_123,
            )
        )
        base += len(rows) + 3  # gaps between batches, as compaction leaves them
    batch = decode_run(run_of(batches), "t", 7)
    assert batch.schema == ARROW_SCHEMA
    assert rows_of(batch) == reference(batches)


def test_long_values_and_many_records() -> None:
    rows = [(b"k" * 9000, b"v" * 20000, [("h", b"x" * 300)], 5) for _ in range(3)]
    rows += [(None, bytes([i % 256]) * (i % 200), (), i) for i in range(2000)]
    batch = encode_batch(rows, compression=4)
    assert rows_of(decode_run(run_of([batch]), "t", 7)) == reference([batch])


def corrupt_payload(records_bytes: bytes, count: int) -> PayloadRun:
    batch = encode_batch([(b"k", b"v", (), 1)] * count)
    header = read_header(batch)
    run = PayloadRun()
    run.add(header, records_bytes)
    return run


def test_record_length_overrunning_the_batch_is_corrupt() -> None:
    good = encode_batch([(b"k", b"v", (), 1)] * 2)[HEADER_SIZE:]
    bad = encode_varint(120) + good[1:]
    with pytest.raises(CorruptRecordError, match="overrun"):
        decode_run(corrupt_payload(bad, 2), "t", 0)


def test_trailing_bytes_after_records_are_corrupt() -> None:
    good = encode_batch([(b"k", b"v", (), 1)] * 2)[HEADER_SIZE:]
    with pytest.raises(CorruptRecordError, match="fill the batch payload"):
        decode_run(corrupt_payload(good + b"\x00\x00", 2), "t", 0)


def test_key_length_beyond_record_is_corrupt() -> None:
    good = bytearray(encode_batch([(b"kk", b"v", (), 1)])[HEADER_SIZE:])
    # record: length, attributes, ts delta, offset delta, key length (zigzag 2 -> 4)
    assert good[4] == 4
    good[4] = 40
    with pytest.raises(CorruptRecordError, match="overruns"):
        decode_run(corrupt_payload(bytes(good), 1), "t", 0)
