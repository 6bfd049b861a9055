"""Bad input: every malformed batch raises CorruptRecordError naming the problem (codec bits
5-7: UnsupportedCompressionTypeError).

Mutations below the CRC are re-signed (CRC recomputed) so that the check under test, not the
CRC, is what catches them.
"""

from __future__ import annotations

import struct

import crc32c
import pytest

from tiered_mq.errors import CorruptRecordError, UnsupportedCompressionTypeError
from tiered_mq.record.batch import validate_batch
from tiered_mq.record.compression import compress
from tiered_mq.record.records import decode_batch, decode_batches, encode_batch
from tiered_mq.record.varint import encode_varint

ROWS = [(b"key", b"value" * 10, [("h", b"v")], 1000 + i) for i in range(5)]


def _good(codec: int = 0) -> bytearray:
    return bytearray(encode_batch(ROWS, compression=codec, base_offset=10))


def _resign(raw: bytearray) -> bytearray:
    struct.pack_into(">I", raw, 17, crc32c.crc32c(raw[21:]))
    return raw


def _with_payload(payload: bytes, count: int, codec: int = 0) -> bytearray:
    """A batch whose records section is ``payload`` verbatim, with a valid CRC."""
    raw = bytearray(encode_batch([], last_offset_delta=max(count - 1, 0)))
    raw += payload
    struct.pack_into(">i", raw, 8, len(raw) - 12)
    struct.pack_into(">h", raw, 21, codec)
    struct.pack_into(">i", raw, 57, count)
    return _resign(raw)


def _record(body: bytes) -> bytes:
    return encode_varint(len(body)) + body


def test_wrong_crc(codec: int) -> None:
    raw = _good(codec)
    raw[-3] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        decode_batch(raw)


def test_wrong_magic() -> None:
    raw = _good()
    raw[16] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        decode_batch(raw)


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 48])
def test_negative_or_short_batch_length(length: int) -> None:
    raw = _good()
    struct.pack_into(">i", raw, 8, length)
    with pytest.raises(CorruptRecordError, match="below"):
        decode_batch(raw)
    with pytest.raises(CorruptRecordError, match="below"):
        list(decode_batches(raw))


def test_truncated_batch_and_header() -> None:
    raw = bytes(_good())
    with pytest.raises(CorruptRecordError, match="truncated"):
        decode_batch(raw[:-1])
    with pytest.raises(CorruptRecordError, match="truncated batch header"):
        decode_batch(raw[:60])
    with pytest.raises(CorruptRecordError, match="truncated"):
        decode_batch(raw, pos=len(raw) - 5)


@pytest.mark.parametrize("count", [2**31 - 1, 10_000, -1])
def test_absurd_record_count(codec: int, count: int) -> None:
    raw = _good(codec)
    struct.pack_into(">i", raw, 57, count)
    with pytest.raises(CorruptRecordError, match="record count"):
        decode_batch(_resign(raw))


@pytest.mark.parametrize("codec_id", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_corrupt_compressed_payload(codec_id: int) -> None:
    payload = b"\x00\x01\x02\x03" * 20
    with pytest.raises(CorruptRecordError, match=r"corrupt|truncated"):
        decode_batch(_with_payload(payload, 1, codec_id))


def test_count_above_records_present_overruns(codec: int) -> None:
    raw = _good(codec)
    struct.pack_into(">i", raw, 57, 6)
    with pytest.raises(CorruptRecordError, match="overrun"):
        decode_batch(_resign(raw))


def test_count_below_records_present_leaves_bytes(codec: int) -> None:
    raw = _good(codec)
    struct.pack_into(">i", raw, 57, 4)
    with pytest.raises(CorruptRecordError, match="bytes left after 4 records"):
        decode_batch(_resign(raw))


def test_record_length_overruns_batch() -> None:
    body = b"\x00\x00\x00\x01\x01\x00"  # attrs, ts 0, offset 0, null key, null value, 0 headers
    with pytest.raises(CorruptRecordError, match="overruns"):
        decode_batch(_with_payload(encode_varint(500) + body + b"\x00", 1))
    with pytest.raises(CorruptRecordError, match="record length -3"):
        decode_batch(_with_payload(encode_varint(-3) + body + b"\x00", 1))


def test_key_or_value_overruns_record() -> None:
    key_too_long = b"\x00\x00\x00" + encode_varint(40) + b"abc" + b"\x01\x00"
    with pytest.raises(CorruptRecordError, match="overrun"):
        decode_batch(_with_payload(_record(key_too_long) + b"\x00" * 6, 1))
    value_too_long = b"\x00\x00\x00\x01" + encode_varint(3) + b"ab" + b"\x00"
    with pytest.raises(CorruptRecordError, match="overrun"):
        decode_batch(_with_payload(_record(value_too_long) + b"\x00", 1))


@pytest.mark.parametrize("field_index", [0, 1], ids=["key", "value"])
def test_negative_key_or_value_length(field_index: int) -> None:
    lengths = [b"\x01", b"\x01"]
    lengths[field_index] = encode_varint(-5)
    body = b"\x00\x00\x00" + lengths[0] + lengths[1] + b"\x00" + b"\x00" * 5
    with pytest.raises(CorruptRecordError, match="negative"):
        decode_batch(_with_payload(_record(body), 1))


@pytest.mark.parametrize(
    "headers",
    [
        encode_varint(1000) + b"\x02h\x02v",  # count far above what fits
        encode_varint(-2) + b"\x02h\x02v",  # negative count
        encode_varint(1) + encode_varint(-1) + b"\x02v",  # null header key
        encode_varint(1) + encode_varint(-4) + b"\x02v",  # negative header key length
        encode_varint(1) + b"\x02h" + encode_varint(30) + b"v",  # header value overruns
        encode_varint(2) + b"\x02h\x02v",  # second header missing
    ],
)
def test_bad_headers(headers: bytes) -> None:
    body = b"\x00\x00\x00\x01\x01" + headers
    with pytest.raises(CorruptRecordError):
        decode_batch(_with_payload(_record(body), 1))


def test_overlong_varint() -> None:
    body = b"\x00" + b"\xff" * 11 + b"\x01\x00\x01\x01\x00"
    with pytest.raises(CorruptRecordError, match="varint longer"):
        decode_batch(_with_payload(_record(body), 1))


def test_corrupt_batch_mid_stream_raises_but_truncated_tail_does_not() -> None:
    good = bytes(_good())
    bad = _good()
    bad[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        list(decode_batches(good + bytes(bad) + good))
    assert len(list(decode_batches(good + good[:30]))) == 1
    assert len(list(decode_batches(good + good[:5]))) == 1


def test_validate_batch_reports_record_count_bound() -> None:
    raw = _good()
    struct.pack_into(">i", raw, 57, 100)
    with pytest.raises(CorruptRecordError, match="impossible"):
        validate_batch(_resign(raw))


def test_compressed_empty_batch_with_empty_payload_decodes() -> None:
    header, records = decode_batch(_with_payload(b"", 0, codec=4))
    assert records == [] and header.compression == 4


def test_compressed_batch_count_bound_after_decompression() -> None:
    payload = compress(1, b"\x00" * 20)
    with pytest.raises(CorruptRecordError, match="impossible in 20 decompressed bytes"):
        decode_batch(_with_payload(payload, 3, codec=1))


@pytest.mark.parametrize("bits", [5, 6, 7])
def test_unknown_codec_bits(bits: int) -> None:
    raw = _good()
    struct.pack_into(">h", raw, 21, bits)
    with pytest.raises(UnsupportedCompressionTypeError, match=f"codec {bits}"):
        decode_batch(_resign(raw))
