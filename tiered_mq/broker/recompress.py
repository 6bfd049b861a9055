"""Topic-level ``compression.type``: re-encode produced batches with the topic's codec.

With ``compression.type=producer`` (the default) batches are stored exactly as produced and
nothing here runs. Any other value (``uncompressed``, ``gzip``, ``snappy``, ``lz4``, ``zstd``)
makes the leader decode each batch whose codec differs and encode it again with the topic's
codec, keeping offsets deltas, timestamps, producer id/epoch/sequence and the transactional flag,
as Kafka does. The re-encoding is paid only when configured.

Each batch decompresses to at most ``max_size`` bytes (the broker's
``message.max.decompressed.bytes``): a bigger one (a decompression bomb) raises
DecompressedTooLargeError (MESSAGE_TOO_LARGE) before anything is appended, having held no more
than the bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES, GZIP, LZ4, ZSTD
from tiered_mq.record.records import Record, batch_records, reencode_batch

CODECS: Final[dict[str, int | None]] = {
    "producer": None,
    "uncompressed": 0,
    "gzip": 1,
    "snappy": 2,
    "lz4": 3,
    "zstd": 4,
}


def target_codec(compression_type: str) -> int | None:
    """The codec id a topic requires, or None to keep the producer's."""
    return CODECS.get(compression_type)


def target_level(config: LogConfig, codec: int) -> int | None:
    """The topic's ``compression.<codec>.level`` for ``codec`` (None: snappy, none)."""
    levels = {
        GZIP: config.compression_gzip_level,
        LZ4: config.compression_lz4_level,
        ZSTD: config.compression_zstd_level,
    }
    return levels.get(codec)


def needs_recompression(batches: list[tuple[int, BatchHeader]], codec: int | None) -> bool:
    return codec is not None and any(h.compression != codec for _, h in batches)


def recompress(
    records: bytes | bytearray | memoryview,
    batches: list[tuple[int, BatchHeader]],
    codec: int,
    *,
    level: int | None = None,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    decoded: Sequence[list[Record]] | None = None,
) -> bytearray:
    """The batches of ``records`` with every batch in ``codec`` at ``level`` (the topic's
    ``compression.<codec>.level``; batches already in ``codec`` are copied unchanged, as Kafka
    keeps them); a batch decompressing to more than ``max_size`` bytes raises
    DecompressedTooLargeError. ``decoded``: the batches' records when the caller decoded them
    already (else decoded here)."""
    out = bytearray()
    view = memoryview(records)
    for i, (pos, h) in enumerate(batches):
        if h.compression == codec:
            out += view[pos : pos + h.size]
            continue
        kept = batch_records(records, pos, i, decoded, max_size=max_size)
        out += reencode_batch(h, kept, compression=codec, compression_level=level)
    return out
