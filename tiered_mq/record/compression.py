"""Record batch compression: the codecs of attribute bits 0-2.

Codec ids (Kafka's ``CompressionType``)::

    0 none    payload as is
    1 gzip    RFC 1952 gzip member(s) (zlib with a gzip wrapper)
    2 snappy  written as xerial framing, read as xerial framing or raw snappy (see below)
    3 lz4     LZ4 frame format, independent blocks, no content size (what Kafka's
              KafkaLZ4BlockOutputStream writes and KafkaLZ4BlockInputStream reads)
    4 zstd    Zstandard frame(s); the frame may lack its content size (librdkafka, Java streams)
              so decompression streams instead of sizing the output from the frame header

Snappy in Kafka comes in two framings. Java clients (snappy-java ``SnappyOutputStream``) write
xerial framing::

    magic     8 bytes  b"\\x82SNAPPY\\x00"
    version   i32      1
    compat    i32      1
    blocks    [i32 length][raw snappy block of at most 32 KiB uncompressed] ...

librdkafka may write a single raw snappy block. :func:`decompress` accepts both; :func:`compress`
writes xerial framing, which Java, librdkafka, kafka-python, aiokafka and sarama all read.

Any failure to decode a payload raises CorruptRecordError naming the codec; an id outside 0-4
raises UnsupportedCompressionTypeError. Both functions are pure and thread-safe (zstd contexts
are per thread).
"""

from __future__ import annotations

import gzip
import struct
import threading
import zlib
from typing import Final

import cramjam
import lz4.frame
import zstandard

from tiered_mq.errors import CorruptRecordError, UnsupportedCompressionTypeError

NONE: Final = 0
GZIP: Final = 1
SNAPPY: Final = 2
LZ4: Final = 3
ZSTD: Final = 4

CODEC_NAMES: Final[dict[int, str]] = {
    NONE: "none",
    GZIP: "gzip",
    SNAPPY: "snappy",
    LZ4: "lz4",
    ZSTD: "zstd",
}

XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
_XERIAL_HEADER: Final = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_HEADER_SIZE: Final = 16
_XERIAL_BLOCK: Final = 32 * 1024
_I32: Final = struct.Struct(">i")

_ZSTD_LEVEL: Final = 3


class _ZstdContexts(threading.local):
    """zstandard contexts are not safe to share between threads: one pair per thread."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)
        self.decompressor = zstandard.ZstdDecompressor()


_ZSTD: Final = _ZstdContexts()

Buffer = bytes | bytearray | memoryview


def codec_name(codec: int) -> str:
    """Kafka's name for a codec id (``compression.type`` values)."""
    try:
        return CODEC_NAMES[codec]
    except KeyError:
        raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}") from None


def codec_id(name: str) -> int:
    """The codec id for a ``compression.type`` name (``none``, ``gzip``, ...)."""
    for codec, known in CODEC_NAMES.items():
        if known == name:
            return codec
    raise UnsupportedCompressionTypeError(f"unknown compression type {name!r}")


def compress(codec: int, data: Buffer) -> bytes:
    """Compress ``data`` as a batch payload with ``codec``."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        return gzip.compress(data, compresslevel=6, mtime=0)
    if codec == SNAPPY:
        return _xerial_compress(data)
    if codec == LZ4:
        return bytes(lz4.frame.compress(data, block_linked=False, store_size=False))
    if codec == ZSTD:
        return _ZSTD.compressor.compress(data)
    raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")


def decompress(codec: int, data: Buffer) -> bytes:
    """Decompress a batch payload written with ``codec``.

    Raises CorruptRecordError if the payload does not decode.
    """
    if codec == NONE:
        return bytes(data)
    if codec not in CODEC_NAMES:
        raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")
    if not data:
        raise CorruptRecordError(f"empty {CODEC_NAMES[codec]} payload")
    try:
        if codec == GZIP:
            return _gunzip(data)
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return _lz4_decompress(data)
        return _zstd_decompress(data)
    except CorruptRecordError:
        raise
    except Exception as exc:  # every codec library has its own error types
        raise CorruptRecordError(
            f"corrupt {CODEC_NAMES[codec]} payload of {len(data)} bytes: {exc}"
        ) from exc


def _gunzip(data: Buffer) -> bytes:
    # wbits 16+MAX_WBITS: gzip wrapper; a decompressobj loop accepts concatenated members.
    out: list[bytes] = []
    rest = bytes(data)
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(rest))
        if not d.eof:
            raise CorruptRecordError("truncated gzip payload")
        rest = d.unused_data
    return b"".join(out)


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK]))
        parts.append(_I32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: Buffer) -> bytes:
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_MAGIC:
        return bytes(cramjam.snappy.decompress_raw(view))
    if len(view) < _XERIAL_HEADER_SIZE:
        raise CorruptRecordError(f"truncated xerial snappy header: {len(view)} bytes")
    out: list[bytes] = []
    pos, n = _XERIAL_HEADER_SIZE, len(view)
    while pos < n:
        if n - pos < 4:
            raise CorruptRecordError(f"truncated xerial block length at {pos}")
        (size,) = _I32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > n:
            raise CorruptRecordError(f"xerial block of {size} bytes overruns payload at {pos}")
        out.append(bytes(cramjam.snappy.decompress_raw(view[pos : pos + size])))
        pos += size
    return b"".join(out)


def _lz4_decompress(data: Buffer) -> bytes:
    out: bytes = lz4.frame.decompress(data)
    return out


def _zstd_decompress(data: Buffer) -> bytes:
    # One decompressobj per frame: a producer may concatenate frames, and a frame written by a
    # stream lacks its content size, so the output is never sized from the frame header.
    out: list[bytes] = []
    rest = bytes(data)
    while rest:
        d = _ZSTD.decompressor.decompressobj()
        out.append(d.decompress(rest))
        if not d.eof:
            raise CorruptRecordError("truncated zstd payload")
        rest = d.unused_data
    return b"".join(out)
