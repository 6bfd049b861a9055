"""Decompression bombs for tests, built without ever holding their decompressed bytes.

``bomb_payload(codec, value_size)`` is a compressed records section holding one record whose
value is ``value_size`` zero bytes, compressed chunk by chunk (1 MiB of zeros at a time, the
same compressed snappy block reused), so a 1 GiB bomb costs the test only its compressed size.
``bomb_batch`` wraps it in a valid v2 batch (correct length and CRC-32C), as a hostile client
would send it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

import cramjam
import crc32c
import lz4.frame
import zstandard

from tiered_mq.record.batch import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD
from tiered_mq.record.compression import GZIP, LZ4, SNAPPY, XERIAL_MAGIC, ZSTD
from tiered_mq.record.records import encode_batch
from tiered_mq.record.varint import encode_varint

GiB = 1 << 30
MiB = 1 << 20
_ZEROS = bytes(MiB)


def _record_parts(value_size: int) -> Iterator[bytes]:
    """One record (key ``b"k"``, ``value_size`` zero bytes) as pieces: head, zeros..., tail."""
    key = b"k"
    body_head = b"\x00" + encode_varint(0) + encode_varint(0) + encode_varint(len(key)) + key
    body_head += encode_varint(value_size)
    tail = encode_varint(0)  # no headers
    yield encode_varint(len(body_head) + value_size + len(tail)) + body_head
    full, rest = divmod(value_size, MiB)
    for _ in range(full):
        yield _ZEROS
    if rest:
        yield _ZEROS[:rest]
    yield tail


def bomb_payload(codec: int, value_size: int = GiB, *, gzip_level: int = 1) -> bytes:
    """The compressed records section of a one-record batch with a ``value_size`` zero value."""
    parts = _record_parts(value_size)
    if codec == GZIP:
        gz = zlib.compressobj(gzip_level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return b"".join(gz.compress(p) for p in parts) + gz.flush()
    if codec == ZSTD:
        zs = zstandard.ZstdCompressor(level=3).compressobj()
        return b"".join(zs.compress(p) for p in parts) + zs.flush()
    if codec == LZ4:
        lz = lz4.frame.LZ4FrameCompressor(block_linked=False)
        return lz.begin() + b"".join(lz.compress(p) for p in parts) + lz.flush()
    if codec == SNAPPY:  # xerial framing, one block per part (a 1 MiB zero block is ~48 KiB)
        out = [XERIAL_MAGIC, struct.pack(">ii", 1, 1)]
        zero_block = bytes(cramjam.snappy.compress_raw(_ZEROS))
        for p in parts:
            block = zero_block if p is _ZEROS else bytes(cramjam.snappy.compress_raw(p))
            out += [struct.pack(">i", len(block)), block]
        return b"".join(out)
    raise ValueError(f"no bomb for codec {codec}")


def with_payload(batch: bytes, payload: bytes) -> bytes:
    """``batch`` (one batch) with its records section replaced by ``payload``; length and
    CRC-32C fixed so the batch passes validation."""
    fields = list(HEADER.unpack_from(batch, 0))
    fields[1] = HEADER_SIZE - LOG_OVERHEAD + len(payload)
    fields[4] = 0
    out = bytearray(HEADER.pack(*fields)) + payload
    out[17:21] = crc32c.crc32c(memoryview(out)[CRC_START:]).to_bytes(4, "big")
    return bytes(out)


def bomb_batch(codec: int, value_size: int = GiB, **kwargs: int) -> bytes:
    """A valid v2 batch of one record with a key, whose payload inflates to ~``value_size``."""
    template = encode_batch([(b"k", b"v", [], None)], compression=codec)
    return with_payload(template, bomb_payload(codec, value_size, **kwargs))
