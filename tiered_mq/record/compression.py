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

Compression levels (Kafka's topic configs ``compression.gzip.level``, ``compression.lz4.level``,
``compression.zstd.level``, used when the broker re-encodes a batch): ``level=None`` is Kafka's
default for the codec: gzip 6 (``-1`` means the same), lz4 the fast compressor (Kafka's default
level 9 selects it), zstd 3. Another lz4 level selects LZ4 HC at that level (as Kafka's
``highCompressor(level)``; LZ4 caps it at 12).

Any failure to decode a payload raises CorruptRecordError naming the codec; an id outside 0-4
raises UnsupportedCompressionTypeError. Both functions are pure and thread-safe (zstd contexts
are per thread).

Decompression bombs: :func:`decompress` never returns more than ``max_size`` bytes of output
(default :data:`DEFAULT_MAX_DECOMPRESSED_BYTES`, 256 MiB; the broker passes its
``message.max.decompressed.bytes``). Output beyond it raises :class:`DecompressedTooLargeError`
as soon as it appears, every codec decoding incrementally: gzip through a zlib decompressobj
with ``max_length`` (at most 1 MiB per call); snappy by the uncompressed length in each raw
block's varint preamble, checked before the block is decoded (xerial: per block, cumulatively);
lz4 through an LZ4FrameDecompressor with a bounded ``max_length`` per call; zstd through a
decompressobj fed input in pieces small enough that a piece cannot decode to more than the room
left (a zstd block decodes to at most 128 KiB and takes at least 4 input bytes). The memory
held is the output so far plus at most one step (<= 4 MiB for lz4, <= 5 blocks of 128 KiB for
zstd).
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

from tiered_mq.errors import (
    CorruptRecordError,
    MessageTooLargeError,
    UnsupportedCompressionTypeError,
)

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

# how each codec's payload starts (snappy has none: a raw block starts with its length)
FRAME_MAGIC: Final[dict[int, bytes]] = {
    GZIP: b"\x1f\x8b",
    LZ4: b"\x04\x22\x4d\x18",
    ZSTD: b"\x28\xb5\x2f\xfd",
}

XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
_XERIAL_HEADER: Final = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_HEADER_SIZE: Final = 16
_XERIAL_BLOCK: Final = 32 * 1024
_I32: Final = struct.Struct(">i")

#: Kafka's default ``compression.<codec>.level``: gzip -1 (zlib's 6), lz4 9 (the fast
#: compressor), zstd 3
DEFAULT_LEVELS: Final[dict[int, int]] = {GZIP: -1, LZ4: 9, ZSTD: 3}

#: Default bound on one payload's decompressed size (a tiered-mq choice: Kafka has none).
DEFAULT_MAX_DECOMPRESSED_BYTES: Final = 256 * 1024 * 1024

_GZIP_STEP: Final = 1024 * 1024  # the most one zlib call decodes
_LZ4_FIRST_STEP: Final = 64 * 1024  # first max_length of an lz4 call (x4 the input if larger)
_LZ4_MAX_STEP: Final = 4 * 1024 * 1024  # the largest lz4 frame block
_ZSTD_BLOCK_MAX: Final = 128 * 1024  # zstd's Block_Maximum_Size
_ZSTD_MIN_BLOCK_INPUT: Final = 4  # 3-byte block header + 1 byte (an RLE block)
_ZSTD_MIN_PIECE: Final = 16  # at most 16 / 4 + 1 blocks (640 KiB) past the bound per call


class DecompressedTooLargeError(MessageTooLargeError, CorruptRecordError):  # type: ignore[misc,valid-type]
    """A payload decodes to more than ``limit`` bytes (a decompression bomb or an oversized batch).

    On the wire it is MESSAGE_TOO_LARGE (10), not CORRUPT_MESSAGE (2): the batch is well formed
    (its CRC-32C passed), it is only larger than this broker accepts, which is what Kafka's code
    10 says ("larger than the max message size the server will accept"). CORRUPT_MESSAGE is
    retriable, so clients would resend the same batch until ``delivery.timeout.ms``; code 10 is
    not, so the producer fails the batch at once with a clear reason. It is also a
    CorruptRecordError, so every reader that treats an undecodable payload as corrupt (the
    Spark reader, the cold reader, the log cleaner) handles it the same way.
    """

    def __init__(self, codec: int, limit: int) -> None:
        name = CODEC_NAMES.get(codec, str(codec))
        super().__init__(
            f"{name} payload decompresses to more than {limit} bytes"
            " (message.max.decompressed.bytes)"
        )
        self.codec = codec
        self.limit = limit


class _ZstdContexts(threading.local):
    """zstandard contexts are not safe to share between threads: one pair per thread."""

    def __init__(self) -> None:
        self.compressors: dict[int, zstandard.ZstdCompressor] = {}
        self.decompressor = zstandard.ZstdDecompressor()

    def compressor(self, level: int) -> zstandard.ZstdCompressor:
        found = self.compressors.get(level)
        if found is None:
            found = self.compressors[level] = zstandard.ZstdCompressor(level=level)
        return found


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


def compress(codec: int, data: Buffer, level: int | None = None) -> bytes:
    """Compress ``data`` as a batch payload with ``codec`` at ``level`` (None: the codec's
    default; snappy has no level)."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        gzip_level = 6 if level in (None, DEFAULT_LEVELS[GZIP]) else level
        return gzip.compress(data, compresslevel=gzip_level, mtime=0)
    if codec == SNAPPY:
        return _xerial_compress(data)
    if codec == LZ4:
        hc = 0 if level in (None, DEFAULT_LEVELS[LZ4]) else level
        return bytes(
            lz4.frame.compress(data, compression_level=hc, block_linked=False, store_size=False)
        )
    if codec == ZSTD:
        return _ZSTD.compressor(DEFAULT_LEVELS[ZSTD] if level is None else level).compress(data)
    raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")


def decompress(codec: int, data: Buffer, max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a batch payload written with ``codec``, to at most ``max_size`` bytes.

    Raises CorruptRecordError if the payload does not decode, DecompressedTooLargeError (a
    CorruptRecordError answering MESSAGE_TOO_LARGE) as soon as the output would exceed
    ``max_size``, without decoding or holding the rest.
    """
    if codec == NONE:
        if len(data) > max_size:
            raise DecompressedTooLargeError(codec, max_size)
        return bytes(data)
    if codec not in CODEC_NAMES:
        raise UnsupportedCompressionTypeError(f"unknown compression codec {codec}")
    if not data:
        raise CorruptRecordError(f"empty {CODEC_NAMES[codec]} payload")
    if max_size < 0:
        raise ValueError(f"max_size {max_size} < 0")
    try:
        if codec == GZIP:
            return _gunzip(data, max_size)
        if codec == SNAPPY:
            return _snappy_decompress(data, max_size)
        if codec == LZ4:
            return _lz4_decompress(data, max_size)
        return _zstd_decompress(data, max_size)
    except CorruptRecordError:
        raise
    except Exception as exc:  # every codec library has its own error types
        raise CorruptRecordError(
            f"corrupt {CODEC_NAMES[codec]} payload of {len(data)} bytes: {exc}"
        ) from exc


def _joined(out: list[bytes]) -> bytes:
    return out[0] if len(out) == 1 else b"".join(out)


def _gunzip(data: Buffer, limit: int) -> bytes:
    # wbits 16+MAX_WBITS: gzip wrapper; a decompressobj loop accepts concatenated members.
    # Each call decodes at most _GZIP_STEP bytes (and never more than room + 1): the interpreter
    # lock is taken between steps, so a worker thread decoding a bomb stalls no other thread.
    out: list[bytes] = []
    size = 0
    rest = bytes(data)  # zlib reads a memoryview slower than a copy of it
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while not d.eof:
            want = min(_GZIP_STEP, limit - size + 1)
            chunk = d.decompress(pending, want)
            size += len(chunk)
            if size > limit:
                raise DecompressedTooLargeError(GZIP, limit)
            out.append(chunk)
            pending = d.unconsumed_tail
            if not pending and len(chunk) < want:
                break  # every input byte used and the output not cut short: the member ended
        if not d.eof:
            raise CorruptRecordError("truncated gzip payload")
        rest = d.unused_data
        if not rest:
            return _joined(out)


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK]))
        parts.append(_I32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_length(view: memoryview, pos: int, end: int) -> int:
    """The uncompressed length in the varint preamble of the raw snappy block at ``pos``."""
    value = shift = 0
    while pos < end and shift <= 28:
        byte = view[pos]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        pos += 1
        shift += 7
    raise CorruptRecordError(f"bad snappy length preamble at {pos}")


def _snappy_block(view: memoryview, pos: int, end: int, room: int, limit: int) -> bytes:
    if _snappy_length(view, pos, end) > room:
        raise DecompressedTooLargeError(SNAPPY, limit)
    return bytes(cramjam.snappy.decompress_raw(view[pos:end]))


def _snappy_decompress(data: Buffer, limit: int) -> bytes:
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_MAGIC:
        return _snappy_block(view, 0, len(view), limit, limit)
    if len(view) < _XERIAL_HEADER_SIZE:
        raise CorruptRecordError(f"truncated xerial snappy header: {len(view)} bytes")
    out: list[bytes] = []
    room = limit
    pos, n = _XERIAL_HEADER_SIZE, len(view)
    while pos < n:
        if n - pos < 4:
            raise CorruptRecordError(f"truncated xerial block length at {pos}")
        (size,) = _I32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > n:
            raise CorruptRecordError(f"xerial block of {size} bytes overruns payload at {pos}")
        block = _snappy_block(view, pos, pos + size, room, limit)
        room -= len(block)
        out.append(block)
        pos += size
    return b"".join(out)


def _lz4_decompress(data: Buffer, limit: int) -> bytes:
    # One frame (bytes after its end mark are ignored, as Kafka's KafkaLZ4BlockInputStream
    # does). LZ4FrameDecompressor allocates max_length up front: steps start near the expected
    # size and double up to the largest lz4 block, never past the room left + 1.
    d = lz4.frame.LZ4FrameDecompressor()
    out: list[bytes] = []
    room = limit
    step = min(max(_LZ4_FIRST_STEP, 4 * len(data)), _LZ4_MAX_STEP)
    src: Buffer = data
    while True:
        chunk: bytes = d.decompress(src, max_length=min(step, room + 1))
        src = b""
        room -= len(chunk)
        if room < 0:
            raise DecompressedTooLargeError(LZ4, limit)
        out.append(chunk)
        if d.eof:
            return _joined(out)
        if d.needs_input:
            raise CorruptRecordError("truncated lz4 payload")
        step = min(2 * step, _LZ4_MAX_STEP)


def _zstd_decompress(data: Buffer, limit: int) -> bytes:
    # One decompressobj per frame: a producer may concatenate frames, and a frame written by a
    # stream lacks its content size, so the output is never sized from the frame header.
    # Input goes in pieces of at most room / 32768 * 4 bytes: each completed block takes >= 4
    # input bytes and yields <= 128 KiB, so a piece cannot decode far past the bound.
    view = memoryview(data)
    out: list[bytes] = []
    room = limit
    pos, n = 0, len(view)
    d = _ZSTD.decompressor.decompressobj()
    while True:
        piece = max(_ZSTD_MIN_PIECE, room // _ZSTD_BLOCK_MAX * _ZSTD_MIN_BLOCK_INPUT)
        chunk = d.decompress(view[pos : pos + piece])
        pos = min(pos + piece, n)
        room -= len(chunk)
        if room < 0:
            raise DecompressedTooLargeError(ZSTD, limit)
        if chunk:
            out.append(chunk)
        if d.eof:
            rest = d.unused_data
            if not rest and pos >= n:
                return _joined(out) if out else b""
            # the next frame starts in the unused part of the last piece
            pos -= len(rest)
            d = _ZSTD.decompressor.decompressobj()
        elif pos >= n:
            raise CorruptRecordError("truncated zstd payload")
