"""Benchmark of the local log: append throughput against the disk's, and zero-copy reads.

1. Appends 1,000,000 100-byte records, prebuilt in ~1 MiB batches, to a LocalLog in a temporary
   directory on the same disk (``--dir``, default /work), timing only ``append_as_leader`` (batch
   validation included) and a final ``flush()``.
2. Writes the same byte count with ``dd if=/dev/zero bs=1M conv=fdatasync`` to the same disk:
   the physical limit for sequential writes; prints both MB/s and their ratio (target >= 0.70).
3. Reads the whole log back through ``LocalLog.read`` -> FileRegion -> ``os.sendfile`` to
   /dev/null and to a socketpair drained by a thread, and reports GB/s.

Run: ``python benchmarks/bench_log.py [--records N] [--rounds R] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch

RECORD_SIZE = 100
BATCH_TARGET = 1 << 20
MB = 1_000_000


def build_batches(total_records: int) -> list[bytearray]:
    value = bytes(range(RECORD_SIZE))
    probe = encode_batch([(None, value, [], 0)] * 1000)
    per_batch = int(1000 * BATCH_TARGET / len(probe))
    template = encode_batch([(None, value, [], 1_700_000_000_000)] * per_batch)
    batches, left = [], total_records
    while left > 0:
        n = min(per_batch, left)
        raw = template if n == per_batch else encode_batch([(None, value, [], 0)] * n)
        batches.append(bytearray(raw))
        left -= n
    return batches


def bench_append(root: Path, batches: list[bytearray]) -> tuple[float, int, Path]:
    directory = Path(tempfile.mkdtemp(prefix="bench-log-", dir=root)) / "bench-0"
    config = LogConfig.from_properties({"max.message.bytes": str(4 * BATCH_TARGET)})
    log = LocalLog.open(directory, config)
    work = [bytearray(b) for b in batches]  # fresh copies: offsets are rewritten in place
    start = time.perf_counter()
    for batch in work:
        log.append_as_leader(batch, 0)
    log.flush()
    elapsed = time.perf_counter() - start
    size = log.size_bytes()
    log.close()
    return elapsed, size, directory


def bench_dd(root: Path, size: int) -> float:
    path = Path(tempfile.mkdtemp(prefix="bench-dd-", dir=root)) / "dd.out"
    count = -(-size // (1 << 20))
    out = subprocess.run(
        ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}", "conv=fdatasync"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    shutil.rmtree(path.parent)
    seconds = float(re.search(r"copied, ([0-9.]+) s", out).group(1))  # type: ignore[union-attr]
    return count * (1 << 20) / seconds


def read_back(directory: Path, sink: int) -> tuple[float, int]:
    """Fetch the whole log 1 MiB at a time like a consumer; sendfile every region to ``sink``."""
    log = LocalLog.open(directory, LogConfig.from_properties({"max.message.bytes": "4194304"}))
    # (base offset, size) of every batch, so the next fetch offset follows from the bytes sent
    layout = [(h.base_offset, h.size) for h in log.iter_batch_headers(0)]
    index, sent = 0, 0
    start = time.perf_counter()
    while index < len(layout):
        info = log.read(layout[index][0], BATCH_TARGET)
        for region in info.regions:
            position, left = region.position, region.length
            while left:
                n = os.sendfile(sink, region.file.fileno(), position, left)
                position += n
                left -= n
        sent += info.size
        covered = 0
        while covered < info.size:
            covered += layout[index][1]
            index += 1
    elapsed = time.perf_counter() - start
    log.close()
    return elapsed, sent


def read_to_socket(directory: Path) -> tuple[float, int]:
    left_sock, right_sock = socket.socketpair()
    received = [0]

    def drain() -> None:
        buf = bytearray(1 << 20)
        while (n := right_sock.recv_into(buf)) > 0:
            received[0] += n

    thread = threading.Thread(target=drain)
    thread.start()
    left_sock.setblocking(True)
    elapsed, sent = read_back(directory, left_sock.fileno())
    left_sock.shutdown(socket.SHUT_WR)
    thread.join()
    left_sock.close()
    right_sock.close()
    assert received[0] == sent
    return elapsed, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path("/work"))
    args = parser.parse_args()
    batches = build_batches(args.records)
    payload = sum(len(b) for b in batches)
    print(
        f"{args.records:,} records of {RECORD_SIZE} B in {len(batches)} batches of "
        f"~{len(batches[0]) / (1 << 20):.2f} MiB ({payload / MB:.1f} MB), disk under {args.dir}"
    )
    log_rates, dd_rates, dirs = [], [], []
    for round_ in range(args.rounds):
        if round_ % 2:  # alternate the order so neither run always follows the other
            dd = bench_dd(args.dir, payload)
            elapsed, size, directory = bench_append(args.dir, batches)
        else:
            elapsed, size, directory = bench_append(args.dir, batches)
            dd = bench_dd(args.dir, size)
        dirs.append(directory)
        log_rates.append(size / elapsed)
        dd_rates.append(dd)
        print(
            f"  round {round_ + 1}: LocalLog {size / elapsed / MB:7.1f} MB/s "
            f"({args.records / elapsed / 1e6:.2f} M records/s)   dd {dd / MB:7.1f} MB/s"
        )
    log_rate, dd_rate = statistics.median(log_rates), statistics.median(dd_rates)
    print(
        f"append (median): LocalLog {log_rate / MB:.1f} MB/s, "
        f"dd conv=fdatasync {dd_rate / MB:.1f} MB/s"
    )
    ratios = sorted(r / d for r, d in zip(log_rates, dd_rates, strict=True))
    print(
        f"ratio LocalLog / dd: median of rounds {statistics.median(ratios):.2f} "
        f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f}; target >= 0.70)"
    )

    with open(os.devnull, "wb") as devnull:
        elapsed, sent = read_back(dirs[-1], devnull.fileno())
    print(f"read via sendfile -> /dev/null: {sent / elapsed / 1e9:.2f} GB/s ({sent / MB:.1f} MB)")
    elapsed, sent = read_to_socket(dirs[-1])
    print(f"read via sendfile -> socketpair: {sent / elapsed / 1e9:.2f} GB/s")
    for directory in dirs:
        shutil.rmtree(directory.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
