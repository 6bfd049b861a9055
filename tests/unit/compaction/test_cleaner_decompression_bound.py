"""The log cleaner decodes batches within ``message.max.decompressed.bytes``: a bigger batch
fails the pass with DecompressedTooLargeError and leaves the log as it was; a bound that fits
lets the same log clean."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.unit.record.bombs import MiB, bomb_batch
from tiered_mq.record.compression import ZSTD, DecompressedTooLargeError

from .helpers import TP, Clock, append, cleaner, open_log, read_records


async def test_batch_above_the_bound_fails_the_pass_and_keeps_the_log(tmp_path: Path) -> None:
    clock = Clock(time.time_ns() // 1_000_000)  # the bomb batch carries the wall-clock time
    log = open_log(tmp_path / "t-0", clock)
    for i in range(20):
        append(log, [(b"k", f"v{i}".encode())], clock)
    log.append_as_leader(bytearray(bomb_batch(ZSTD, 2 * MiB)), leader_epoch=0)  # key b"k"
    for i in range(20):
        append(log, [(b"k", f"w{i}".encode())], clock)
    before = [(r.offset, r.key, r.value) for r in read_records(log)]
    files = sorted(p.name for p in log.dir.iterdir())

    c, partition = cleaner(log, clock, max_decompressed_bytes=MiB)
    with pytest.raises(DecompressedTooLargeError):
        await c.clean_partition(TP, partition)
    assert [(r.offset, r.key, r.value) for r in read_records(log)] == before
    assert sorted(p.name for p in log.dir.iterdir()) == files  # no .cleaned / .swap left

    c, partition = cleaner(log, clock, max_decompressed_bytes=4 * MiB)
    stats = await c.clean_partition(TP, partition)
    assert stats is not None and stats.records_removed > 0
    log.close()
