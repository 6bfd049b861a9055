"""Codecs: round trips, interop with kafka-python's codecs and the framings other clients write."""

from __future__ import annotations

import gzip
import os
import struct

import cramjam
import lz4.frame
import pytest
import zstandard
from kafka import codec as kp_codec

from tiered_mq.errors import CorruptRecordError, UnsupportedCompressionTypeError
from tiered_mq.record.compression import (
    XERIAL_MAGIC,
    codec_id,
    codec_name,
    compress,
    decompress,
)

PAYLOADS = [b"x", b"hello kafka " * 1000, os.urandom(70_000) + b"\x00" * 70_000]

KP_ENCODE = {
    1: kp_codec.gzip_encode,
    2: kp_codec.snappy_encode,
    3: kp_codec.lz4_encode,
    4: kp_codec.zstd_encode,
}
KP_DECODE = {
    1: kp_codec.gzip_decode,
    2: kp_codec.snappy_decode,
    3: kp_codec.lz4_decode,
    4: kp_codec.zstd_decode,
}


@pytest.mark.parametrize("data", PAYLOADS, ids=["1B", "12KB-text", "140KB-mixed"])
def test_round_trip(codec: int, data: bytes) -> None:
    packed = compress(codec, data)
    assert decompress(codec, packed) == data
    assert decompress(codec, memoryview(packed)) == data
    if codec:
        assert KP_DECODE[codec](packed) == data


@pytest.mark.parametrize("data", PAYLOADS, ids=["1B", "12KB-text", "140KB-mixed"])
@pytest.mark.parametrize("codec_id_", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_decodes_kafka_python_payloads(codec_id_: int, data: bytes) -> None:
    assert decompress(codec_id_, KP_ENCODE[codec_id_](data)) == data


def test_snappy_accepts_xerial_and_raw() -> None:
    data = b"abc" * 50_000  # more than one 32 KiB xerial block
    xerial = kp_codec.snappy_encode(data, xerial_compatible=True)
    assert xerial.startswith(XERIAL_MAGIC)
    assert decompress(2, xerial) == data
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert decompress(2, raw) == data
    # Hand-framed xerial stream with uneven blocks, independent of any client library.
    blocks = [data[:1000], data[1000:40_000], data[40_000:]]
    framed = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for block in blocks:
        body = bytes(cramjam.snappy.compress_raw(block))
        framed += struct.pack(">i", len(body)) + body
    assert decompress(2, framed) == data


def test_snappy_writes_xerial_framing() -> None:
    packed = compress(2, b"q" * 100_000)
    assert packed[:16] == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    (first_block,) = struct.unpack_from(">i", packed, 16)
    assert len(bytes(cramjam.snappy.decompress_raw(packed[20 : 20 + first_block]))) == 32 * 1024


def test_lz4_writes_independent_blocks_without_content_size() -> None:
    packed = compress(3, os.urandom(300_000))
    flg = packed[4]
    assert flg >> 6 == 1  # frame version 01
    assert flg & 0x20  # block independence
    assert not flg & 0x08  # no content size
    info = lz4.frame.get_frame_info(packed)
    assert not info["block_linked"]


def test_zstd_accepts_frames_without_content_size_and_concatenated_frames() -> None:
    data = os.urandom(5000) * 20
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert zstandard.get_frame_parameters(no_size).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(4, no_size) == data
    streamed = zstandard.ZstdCompressor().compressobj()
    frame = streamed.compress(data) + streamed.flush()
    assert decompress(4, frame + no_size) == data + data


def test_gzip_accepts_concatenated_members() -> None:
    assert decompress(1, gzip.compress(b"one") + gzip.compress(b"two")) == b"onetwo"


@pytest.mark.parametrize("codec_id_", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_corrupt_payloads_raise_corrupt_record(codec_id_: int) -> None:
    good = compress(codec_id_, b"some payload worth compressing " * 200)
    bad_inputs = {
        "garbage": b"\x13\x37" * 40,
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "flipped": _flip(good, len(good) // 2),
    }
    for name, bad in bad_inputs.items():
        try:
            out = decompress(codec_id_, bad)
        except CorruptRecordError as exc:
            assert exc.errno == 2, name
        else:
            # A flipped byte may land in a literal run and still decode: never to the original.
            assert name == "flipped" and out != b"some payload worth compressing " * 200


def test_xerial_block_overrun_is_corrupt() -> None:
    framed = XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", 1000) + b"abc"
    with pytest.raises(CorruptRecordError, match="overruns"):
        decompress(2, framed)
    with pytest.raises(CorruptRecordError, match="block length"):
        decompress(2, XERIAL_MAGIC + struct.pack(">ii", 1, 1) + b"\x00\x00")


@pytest.mark.parametrize("bad", [5, 6, 7, -1, 100])
def test_unknown_codec(bad: int) -> None:
    with pytest.raises(UnsupportedCompressionTypeError):
        compress(bad, b"x")
    with pytest.raises(UnsupportedCompressionTypeError):
        decompress(bad, b"x")
    with pytest.raises(UnsupportedCompressionTypeError):
        codec_name(bad)


def test_codec_names() -> None:
    assert [codec_name(c) for c in range(5)] == ["none", "gzip", "snappy", "lz4", "zstd"]
    assert [codec_id(n) for n in ("none", "gzip", "snappy", "lz4", "zstd")] == [0, 1, 2, 3, 4]
    with pytest.raises(UnsupportedCompressionTypeError):
        codec_id("brotli")


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


@pytest.mark.parametrize("codec_id_", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_concurrent_threads(codec_id_: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    payloads = [os.urandom(2000) * (i + 1) for i in range(8)]

    def work(data: bytes) -> bool:
        return all(decompress(codec_id_, compress(codec_id_, data)) == data for _ in range(20))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, payloads))
