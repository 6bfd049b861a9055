"""Test helpers: build record batches v2, read a log back (tests and the crash writer)."""

from __future__ import annotations

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.records import encode_batch


def make_batch(
    count: int = 3, timestamp: int = 1_000, value_size: int = 20, seed: int = 0
) -> bytearray:
    """One uncompressed batch of ``count`` records with timestamps ``timestamp + i``."""
    records = [
        (
            f"k{seed}-{i}".encode(),
            bytes((seed + i + j) % 251 for j in range(value_size)),
            [],
            timestamp + i,
        )
        for i in range(count)
    ]
    return bytearray(encode_batch(records))


def read_all(log: LocalLog, start: int | None = None) -> bytes:
    """Every byte of the log from ``start`` (default: local log start) through read()."""
    offset = log.local_log_start_offset if start is None else start
    out = bytearray()
    while offset < log.log_end_offset:
        info = log.read(offset, 1 << 20)
        assert info.regions, f"nothing read at {offset}"
        chunk = b"".join(r.read() for r in info.regions)
        out += chunk
        offset = iter_batches(chunk)[-1][1].next_offset
    return bytes(out)
