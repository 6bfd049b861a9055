"""Hypothesis: encode/decode round trips, kafka-python agreement, and fuzzed bytes."""

from __future__ import annotations

import struct

import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.record.oracle import kp_decode
from tiered_mq.errors import CorruptRecordError, UnsupportedCompressionTypeError
from tiered_mq.record.records import decode_batch, decode_batches
from tiered_mq.record.records import encode_batch as encode

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(st.tuples(st.text(max_size=20), blobs), max_size=4)
timestamps = st.integers(min_value=0, max_value=2**50)
records = st.lists(st.tuples(blobs, blobs, headers, timestamps), min_size=1, max_size=40)
codecs = st.sampled_from([0, 1, 2, 3, 4])
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(records, codecs, st.integers(min_value=0, max_value=2**62))
def test_round_trip_and_kafka_python_agree(rows: list, codec: int, base_offset: int) -> None:
    raw = encode(rows, compression=codec, base_offset=base_offset)
    header, decoded = decode_batch(raw)
    expected = [
        (base_offset + i, ts, key, value, list(hs)) for i, (key, value, hs, ts) in enumerate(rows)
    ]
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in decoded] == expected
    assert header.max_timestamp == max(ts for *_, ts in rows)
    assert header.last_offset == base_offset + len(rows) - 1
    _, kp_rows = kp_decode(raw)
    assert kp_rows == expected


@SETTINGS
@given(
    records,
    codecs,
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=6),
    st.booleans(),
)
def test_mutated_batches_raise_only_typed_errors(
    rows: list, codec: int, edits: list[tuple[int, int]], resign: bool
) -> None:
    raw = bytearray(encode(rows, compression=codec))
    for where, byte in edits:
        raw[where % len(raw)] = byte
    if resign:  # reach the checks behind the CRC
        struct.pack_into(">I", raw, 17, crc32c.crc32c(raw[21:]))
    try:
        decode_batch(raw)
    except (CorruptRecordError, UnsupportedCompressionTypeError):
        pass


@SETTINGS
@given(records, codecs, st.integers(min_value=0, max_value=10_000))
def test_truncated_streams_decode_the_complete_prefix(rows: list, codec: int, cut: int) -> None:
    one = encode(rows, compression=codec)
    blob = one + one
    kept = list(decode_batches(blob[: cut % (len(blob) + 1)]))
    assert len(kept) == (cut % (len(blob) + 1)) // len(one)


@SETTINGS
@given(records, codecs, st.data())
def test_compaction_reencode_keeps_offsets(rows: list, codec: int, data: st.DataObject) -> None:
    raw = encode(rows, compression=codec, base_offset=1000)
    header, decoded = decode_batch(raw)
    kept = [r for r in decoded if data.draw(st.booleans())]
    again = encode(
        kept,
        compression=codec,
        base_offset=header.base_offset,
        keep_offsets=True,
        last_offset_delta=header.last_offset_delta,
    )
    new_header, redecoded = decode_batch(again)
    assert redecoded == kept
    assert new_header.last_offset == header.last_offset
    assert kp_decode(again)[1] == [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in kept]
