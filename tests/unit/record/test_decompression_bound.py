"""decompress(max_size): bombs are refused early with a typed error, in bounded memory;
payloads up to the bound (exactly at it included) still round-trip."""

from __future__ import annotations

import gzip
import os
import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import cramjam
import pytest
import zstandard

from tests.unit.record.bombs import GiB, MiB, bomb_batch, bomb_payload
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.errors import CorruptRecordError, MessageTooLargeError
from tiered_mq.record.compression import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    XERIAL_MAGIC,
    ZSTD,
    DecompressedTooLargeError,
    compress,
    decompress,
)
from tiered_mq.record.records import decode_batch

BOUND = 16 * MiB
MEMORY_LIMIT = 100 * MiB
COMPRESSED = [GZIP, SNAPPY, LZ4, ZSTD]
IDS = ["gzip", "snappy", "lz4", "zstd"]
BOMB_SIZES = {GZIP: GiB, SNAPPY: 256 * MiB, LZ4: GiB, ZSTD: GiB}  # snappy: ~48 KiB per MiB


@pytest.fixture(scope="module")
def bombs() -> dict[int, bytes]:
    return {codec: bomb_payload(codec, BOMB_SIZES[codec]) for codec in COMPRESSED}


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def _reset_peak_rss() -> bool:
    """Reset this process's VmHWM (Linux >= 4.0); False where that is not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_bytes(fn: Callable[[], object]) -> tuple[int, int | None]:
    """(tracemalloc peak, growth of the peak RSS over the RSS before or None) while ``fn`` runs:
    the first sees Python allocations, the second native ones too (zlib, lz4, zstd, snappy)."""
    base_kib = _status_kib("VmRSS")
    reset = _reset_peak_rss()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    native = (_status_kib("VmHWM") - base_kib) * 1024 if reset else None
    return peak, native


@pytest.mark.parametrize("codec", COMPRESSED, ids=IDS)
def test_bomb_is_refused_with_typed_error_in_bounded_memory(
    codec: int, bombs: dict[int, bytes]
) -> None:
    payload = bombs[codec]
    assert len(payload) < 50 * MiB  # the test holds only the compressed bomb
    caught: list[DecompressedTooLargeError] = []

    def run() -> None:
        with pytest.raises(DecompressedTooLargeError) as info:
            decompress(codec, payload, max_size=BOUND)
        caught.append(info.value)

    peak, native = _peak_bytes(run)
    err = caught[0]
    assert err.errno == 10 and err.limit == BOUND and err.codec == codec
    assert isinstance(err, MessageTooLargeError) and isinstance(err, CorruptRecordError)
    assert error_code(err) == 10
    assert "message.max.decompressed.bytes" in str(err)
    assert peak < MEMORY_LIMIT, f"python peak {peak}"
    if native is not None:
        assert native < MEMORY_LIMIT, f"native peak growth {native}"


@pytest.mark.parametrize("codec", COMPRESSED, ids=IDS)
def test_bomb_batch_refused_by_decode_batch(codec: int) -> None:
    small = bomb_batch(codec, 3 * MiB)
    header, records = decode_batch(small)  # a real batch: it decodes under the default bound
    assert header.records_count == 1 and records[0].value == bytes(3 * MiB)
    with pytest.raises(DecompressedTooLargeError):
        decode_batch(small, max_size=2 * MiB)


def test_raw_snappy_length_preamble_is_checked_before_decoding() -> None:
    body = bytes(cramjam.snappy.compress_raw(b"abc" * 100))
    # a raw block claiming 1 GiB: refused from its preamble, nothing allocated
    liar = _uvarint(GiB) + body[len(_uvarint(300)) :]

    def run() -> None:
        with pytest.raises(DecompressedTooLargeError):
            decompress(SNAPPY, liar)

    peak, native = _peak_bytes(run)
    assert peak < MiB
    assert native is None or native < 16 * MiB
    with pytest.raises(DecompressedTooLargeError):
        decompress(SNAPPY, body, max_size=299)
    assert decompress(SNAPPY, body, max_size=300) == b"abc" * 100
    # xerial: the running total of the blocks' preambles is checked block by block
    block = struct.pack(">i", len(body)) + body
    framed = XERIAL_MAGIC + struct.pack(">ii", 1, 1) + block * 3
    assert decompress(SNAPPY, framed, max_size=900) == b"abc" * 300
    with pytest.raises(DecompressedTooLargeError):
        decompress(SNAPPY, framed, max_size=899)


def test_bad_snappy_preamble_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="preamble"):
        decompress(SNAPPY, b"\xff\xff\xff\xff\xff\xff")


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


SIZES = [1, 300_000, 5 * MiB + 17]  # 5 MiB: several lz4 steps, several zstd pieces


@pytest.mark.parametrize("size", SIZES, ids=["1B", "300KB", "5MiB"])
@pytest.mark.parametrize("codec", [NONE, *COMPRESSED], ids=["none", *IDS])
def test_exactly_at_bound_is_accepted_one_above_is_not(codec: int, size: int) -> None:
    data = (os.urandom(1000) + bytes(size))[:size]
    packed = compress(codec, data)
    assert decompress(codec, packed, max_size=size) == data
    assert decompress(codec, memoryview(packed), max_size=size + 1) == data
    with pytest.raises(DecompressedTooLargeError):
        decompress(codec, packed, max_size=size - 1)


def test_concatenated_frames_and_members_count_together() -> None:
    data = os.urandom(40_000)
    streamed = zstandard.ZstdCompressor().compressobj()
    no_size = streamed.compress(data) + streamed.flush()
    two = compress(ZSTD, data) + no_size
    assert decompress(ZSTD, two, max_size=80_000) == data + data
    with pytest.raises(DecompressedTooLargeError):
        decompress(ZSTD, two, max_size=79_999)
    members = gzip.compress(data) + gzip.compress(data)
    assert decompress(GZIP, members, max_size=80_000) == data + data
    with pytest.raises(DecompressedTooLargeError):
        decompress(GZIP, members, max_size=79_999)


@pytest.mark.parametrize("codec", COMPRESSED, ids=IDS)
def test_truncated_payload_is_still_corrupt_not_too_large(codec: int) -> None:
    packed = compress(codec, os.urandom(200_000))
    with pytest.raises(CorruptRecordError) as info:
        decompress(codec, packed[: len(packed) - 100], max_size=10 * MiB)
    assert not isinstance(info.value, DecompressedTooLargeError)


def test_default_bound_is_256_mib_and_applies(bombs: dict[int, bytes]) -> None:
    with pytest.raises(DecompressedTooLargeError) as info:
        decompress(ZSTD, bombs[ZSTD])
    assert info.value.limit == 256 * MiB
