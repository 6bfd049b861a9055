"""Crash-test writer: appends a deterministic batch sequence to a LocalLog until killed.

Run as ``python -m tests.unit.hot.crash_writer DIR SEED``. After every flush it prints
``<batch index> <log end offset>`` on stdout (a pipe), so the parent knows what was durable
before it sent SIGKILL. Batch ``i`` is :func:`expected_batch` (i), whatever run appended it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import assign_offset_and_epoch

from .helpers import make_batch

CONFIG = LogConfig.from_properties({"segment.bytes": "65536", "index.interval.bytes": "1024"})
EPOCH = 3


def batch_count(i: int) -> int:
    return 1 + i % 5


def base_offset(i: int) -> int:
    return sum(batch_count(k) for k in range(i))


def produced_batch(i: int) -> bytearray:
    return make_batch(batch_count(i), timestamp=1_000 + i, value_size=50 + (i * 37) % 400, seed=i)


def expected_batch(i: int) -> bytes:
    batch = produced_batch(i)
    assign_offset_and_epoch(batch, 0, base_offset(i), EPOCH)
    return bytes(batch)


def count_batches(log: LocalLog) -> int:
    return sum(1 for _ in log.iter_batch_headers(0))


def main() -> None:
    directory, seed = Path(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    log = LocalLog.open(directory, CONFIG)
    i = count_batches(log)
    print(f"start {i}", flush=True)
    while True:
        log.append_as_leader(produced_batch(i), EPOCH)
        if rng.random() < 0.5:
            log.flush()
            print(f"{i} {log.log_end_offset}", flush=True)
        i += 1


if __name__ == "__main__":
    main()
