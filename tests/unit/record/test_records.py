"""Batch encode/decode checked against kafka-python in both directions, for every codec."""

from __future__ import annotations

import os

import pytest

from tests.unit.record.oracle import kp_build, kp_decode
from tiered_mq.record.batch import iter_batches, read_header
from tiered_mq.record.records import (
    Record,
    decode_batch,
    decode_batches,
    encode_batch,
    reencode_batch,
)

ROWS: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = [
    (0, 1_700_000_000_000, b"key-0", b"value-0", []),
    (1, 1_700_000_000_005, None, b"null key", [("h1", b"v1"), ("h2", None)]),
    (2, 1_699_999_999_990, b"null value", None, []),  # timestamp below the base: negative delta
    (3, 1_700_000_000_100, None, None, [("", b""), ("unicode-\u00e9", b"\x00\xff")]),
    (4, 1_700_000_001_000, b"", b"", []),
    (5, 1_700_000_002_000, b"k" * 300, os.urandom(20_000), [("big", b"x" * 5000)]),
]


def _as_rows(records: list[Record]) -> list[tuple[object, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


def test_kafka_python_batches_decode_with_ours(codec: int) -> None:
    raw = kp_build(ROWS, codec, producer_id=42, producer_epoch=3, base_sequence=17)
    header, records = decode_batch(raw)
    assert header.compression == codec
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 17)
    assert header.records_count == len(ROWS)
    assert header.last_offset_delta == 5
    assert header.max_timestamp == max(r[1] for r in ROWS)
    assert _as_rows(records) == [tuple(r) for r in ROWS]


def test_our_batches_decode_with_kafka_python(codec: int) -> None:
    inputs = [(key, value, headers, ts) for _, ts, key, value, headers in ROWS]
    raw = encode_batch(
        inputs,
        compression=codec,
        base_offset=1000,
        producer_id=7,
        producer_epoch=2,
        base_sequence=99,
        is_transactional=True,
    )
    batch, rows = kp_decode(raw)
    assert batch.compression_type == codec
    assert batch.is_transactional and not batch.is_control_batch
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 2, 99)
    assert batch.base_offset == 1000 and batch.last_offset_delta == 5
    assert batch.first_timestamp == ROWS[0][1]
    assert batch.max_timestamp == max(r[1] for r in ROWS)
    assert rows == [(1000 + o, ts, k, v, h) for o, ts, k, v, h in ROWS]


def test_round_trip_keeps_every_header_field(codec: int) -> None:
    raw = encode_batch(
        [(b"k", b"v", [], 5)],
        compression=codec,
        base_offset=77,
        partition_leader_epoch=9,
        producer_id=123456789012,
        producer_epoch=32767,
        base_sequence=2147483000,
    )
    header, records = decode_batch(raw)
    assert (header.base_offset, header.partition_leader_epoch, header.magic) == (77, 9, 2)
    assert header.producer_id == 123456789012 and header.producer_epoch == 32767
    assert header.base_sequence == 2147483000 and header.last_sequence == 2147483000
    assert header.size == len(raw)
    assert records == [Record(77, 5, b"k", b"v", [])]


def test_record_objects_are_accepted_as_input() -> None:
    records = [Record(0, 10, b"a", b"1", [("h", b"x")]), Record(0, 11, None, b"2", [])]
    _, decoded = decode_batch(encode_batch(records, base_offset=5))
    assert decoded == [Record(5, 10, b"a", b"1", [("h", b"x")]), Record(6, 11, None, b"2", [])]


def test_keep_offsets_preserves_gaps_and_last_offset_delta() -> None:
    kept = [Record(103, 1, b"a", b"1", []), Record(107, 2, b"b", b"2", [])]
    raw = encode_batch(kept, base_offset=100, keep_offsets=True, last_offset_delta=9)
    header, decoded = decode_batch(raw)
    assert [r.offset for r in decoded] == [103, 107]
    assert header.last_offset == 109 and header.next_offset == 110
    _, rows = kp_decode(raw)
    assert [row[0] for row in rows] == [103, 107]


def test_keep_offsets_rejects_unordered_offsets() -> None:
    with pytest.raises(ValueError, match="not above"):
        encode_batch([Record(5, 1, None, b"", []), Record(5, 1, None, b"", [])], keep_offsets=True)
    with pytest.raises(ValueError, match="Record-like"):
        encode_batch([(None, b"", [], 1)], keep_offsets=True)
    with pytest.raises(ValueError, match="below last"):
        encode_batch([Record(5, 1, None, b"", [])], keep_offsets=True, last_offset_delta=2)


def test_empty_batch_keeps_its_offset_range() -> None:
    raw = encode_batch([], base_offset=50, last_offset_delta=4, producer_id=3, producer_epoch=1)
    header, records = decode_batch(raw)
    assert records == [] and header.records_count == 0
    assert header.last_offset == 54
    assert header.base_timestamp == -1 and header.max_timestamp == -1


def test_base_timestamp_and_negative_deltas() -> None:
    raw = encode_batch([(None, b"a", [], 900), (None, b"b", [], 1100)], base_timestamp=1000)
    header, records = decode_batch(raw)
    assert header.base_timestamp == 1000 and header.max_timestamp == 1100
    assert [r.timestamp for r in records] == [900, 1100]
    assert [row[1] for row in kp_decode(raw)[1]] == [900, 1100]


def test_missing_timestamp_means_now() -> None:
    import time

    before = time.time_ns() // 1_000_000
    _, records = decode_batch(encode_batch([(None, b"a", [], None)]))
    assert before <= records[0].timestamp <= time.time_ns() // 1_000_000


def test_log_append_time_reports_max_timestamp_for_every_record() -> None:
    raw = encode_batch(
        [(None, b"a", [], 10), (None, b"b", [], 20)], log_append_time=True, append_time=5000
    )
    header, records = decode_batch(raw)
    assert header.is_log_append_time and header.max_timestamp == 5000
    assert [r.timestamp for r in records] == [5000, 5000]
    batch, rows = kp_decode(raw)
    assert batch.timestamp_type == 1
    assert [row[1] for row in rows] == [5000, 5000]


def test_string_keys_and_values_are_utf8() -> None:
    _, records = decode_batch(encode_batch([("k\u00e9", "v", [("h", "x")], 1)]))
    assert records[0].key == "k\u00e9".encode() and records[0].value == b"v"
    assert records[0].headers == [("h", b"x")]


def test_header_fast_path_reads_no_record(codec: int) -> None:
    raw = encode_batch(
        [(b"k", b"v" * 100, [], 1000 + i) for i in range(10)],
        compression=codec,
        base_offset=300,
        producer_id=8,
        producer_epoch=4,
        base_sequence=40,
        is_transactional=True,
    )
    # Corrupt every record byte: the header is still readable without touching them.
    mangled = raw[:61] + bytes(len(raw) - 61)
    header = read_header(mangled)
    assert (header.base_offset, header.last_offset, header.records_count) == (300, 309, 10)
    assert (header.base_timestamp, header.max_timestamp) == (1000, 1009)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (8, 4, 40)
    assert header.last_sequence == 49
    assert header.is_transactional and not header.is_control
    assert header.compression == codec and header.size == len(raw)


def test_decode_batches_splits_concatenated_batches(codec: int) -> None:
    raws = [
        encode_batch([(None, f"{b}-{i}".encode(), [], i) for i in range(b + 1)], base_offset=b * 10)
        for b in range(4)
    ]
    blob = b"".join(raws)
    decoded = list(decode_batches(blob))
    assert [h.base_offset for h, _ in decoded] == [0, 10, 20, 30]
    assert [len(r) for _, r in decoded] == [1, 2, 3, 4]
    assert [pos for pos, _ in iter_batches(blob)] == [0, *_prefix_sums([len(r) for r in raws])]
    # A fetch cut mid-batch: the complete batches decode, the partial one is left out.
    for cut in (len(blob) - 1, len(blob) - len(raws[-1]) + 5, len(blob) - len(raws[-1]) + 61):
        assert [h.base_offset for h, _ in decode_batches(blob[:cut])] == [0, 10, 20]
    [(_, only)] = list(decode_batches(memoryview(blob)[: len(raws[0]) + 3]))
    assert only[0].value == b"0-0"


def _prefix_sums(sizes: list[int]) -> list[int]:
    out, total = [], 0
    for size in sizes[:-1]:
        total += size
        out.append(total)
    return out


def test_decode_batch_at_position_inside_larger_buffer() -> None:
    first = encode_batch([(None, b"a", [], 1)])
    second = encode_batch([(None, b"b", [], 2)], base_offset=1)
    header, records = decode_batch(bytearray(first + second), len(first))
    assert header.base_offset == 1 and records[0].value == b"b"


def test_empty_batch_is_written_uncompressed(codec: int) -> None:
    raw = encode_batch([], compression=codec, base_offset=3, last_offset_delta=2)
    header, records = decode_batch(raw)
    assert header.compression == 0 and records == [] and header.last_offset == 5
    batch, rows = kp_decode(raw)
    assert rows == [] and batch.last_offset_delta == 2


def test_headers_as_mapping_or_none() -> None:
    raw = encode_batch([(b"k", b"v", {"a": b"1", "b": None}, 1), (b"k", b"v", None, 2)])
    _, records = decode_batch(raw)
    assert records[0].headers == [("a", b"1"), ("b", None)] and records[1].headers == []


def test_reencode_batch_keeps_every_header_field_across_codecs() -> None:
    records = [
        Record(offset=10 + i, timestamp=1_000 + i, key=b"k", value=b"v" * i, headers=[])
        for i in range(3)
    ]
    records += [Record(offset=13, timestamp=1_005, key=None, value=b"last", headers=[("h", b"1")])]
    original = encode_batch(
        records,
        compression=0,
        base_offset=10,
        producer_id=7,
        producer_epoch=2,
        base_sequence=40,
        is_transactional=True,
        partition_leader_epoch=3,
        log_append_time=True,
        append_time=9_999,
        keep_offsets=True,
    )
    header, decoded = decode_batch(original)
    for codec in (1, 2, 3, 4):
        again, again_records = decode_batch(reencode_batch(header, decoded, compression=codec))
        assert again.compression == codec
        fields = ("base_offset", "last_offset_delta", "producer_id", "producer_epoch")
        fields += ("base_sequence", "partition_leader_epoch", "max_timestamp", "records_count")
        for name in fields:
            assert getattr(again, name) == getattr(header, name), name
        assert again.is_transactional and again.is_log_append_time
        assert again_records == decoded
