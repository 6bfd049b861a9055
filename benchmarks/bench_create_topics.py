"""Admin: CreateTopics of one topic with many partitions, tiered-mq against Tansu (memory).

Per broker, run and size (``--partitions``, 500 and 2000): one confluent-kafka
``AdminClient.create_topics([NewTopic(name, P, 1)])`` of a fresh topic, timed from the call to
the future's result, i.e. to the broker's CreateTopics answer (ours answers once every partition
directory is created and its log open). Each run uses a fresh topic; runs are interleaved
(ours, Tansu, ours, ...) and the best (lowest) and median of ``--runs`` are printed per broker,
with the ratio ours / Tansu (lower is better). Our broker is ``tiered-mq dev`` on a data dir in
a temporary directory on this machine's disk; Tansu keeps its topics in memory.

The physical reference: the cost of one fsync of a small file on the disk of our data dir (a
16-byte write then fsync, mean of 200, as a partition's small files are written) times the
fsyncs per partition, counted in our broker with strace (``-f -c -e trace=fsync,fdatasync``
attached for an extra, untimed CreateTopics of ``--count-partitions`` partitions; strace slows
the broker, so that creation is not timed): what the fsyncs alone cost per topic when they run
one after another. Without strace the count is left out.

Run: ``python benchmarks/bench_create_topics.py [--partitions 500 2000] [--runs R]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _peers import OursProcess, TansuProcess
from confluent_kafka.admin import AdminClient, NewTopic

_FSYNC_SAMPLES = 200


def create_seconds(bootstrap: str, partitions: int) -> float:
    """Wall time of one CreateTopics of a fresh topic with ``partitions`` partitions."""
    # a slow creation is measured, not timed out (librdkafka's socket.timeout.ms is 60 s)
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300_000})
    admin.list_topics(timeout=10)  # connected before the clock starts
    name = f"ct-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    futures = admin.create_topics(
        [NewTopic(name, partitions, 1)], operation_timeout=120, request_timeout=180
    )
    futures[name].result(180)
    return time.perf_counter() - started


def fsync_seconds(directory: Path) -> float:
    """Mean cost of writing a 16-byte file and fsyncing it, in ``directory``."""
    scratch = Path(tempfile.mkdtemp(prefix="fsync-", dir=directory))
    try:
        started = time.perf_counter()
        for i in range(_FSYNC_SAMPLES):
            fd = os.open(scratch / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, b"0123456789abcdef")
                os.fsync(fd)
            finally:
                os.close(fd)
        return (time.perf_counter() - started) / _FSYNC_SAMPLES
    finally:
        shutil.rmtree(scratch)


def fsyncs_per_partition(pid: int, bootstrap: str, partitions: int) -> float | None:
    """fsync + fdatasync calls of broker ``pid`` per partition during one CreateTopics of
    ``partitions`` partitions (strace attached to every thread); None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    out = Path(tempfile.mkstemp(prefix="strace-", suffix=".txt")[1])
    tracer = subprocess.Popen(
        [strace, "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", str(out), "-p", str(pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)  # attached to every thread
        create_seconds(bootstrap, partitions)
        time.sleep(0.5)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(30)
    calls = 0
    for line in out.read_text().splitlines():
        fields = line.split()
        if fields and fields[-1] in ("fsync", "fdatasync"):
            calls += int(next(f for f in fields[3:] if re.fullmatch(r"\d+", f)))
    out.unlink()
    return calls / partitions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count-partitions", type=int, default=200)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-create-topics-"))
    peers: dict[str, Any] = {}
    try:
        peers["tiered-mq"] = ours_ = OursProcess(work / "ours")
        # counted first, on a broker with no topics yet: ptrace slows every syscall, and a
        # broker already holding thousands of partitions then misses the client's timeouts
        fsync = fsync_seconds(ours_.data_dir)
        per_partition = fsyncs_per_partition(ours_.pid, ours_.bootstrap, args.count_partitions)
        peers["tansu-memory"] = TansuProcess(work / "tansu.log").start()
        times: dict[tuple[str, int], list[float]] = {}
        for run in range(args.runs):
            for partitions in args.partitions:
                for name, peer in peers.items():
                    seconds = create_seconds(peer.bootstrap, partitions)
                    times.setdefault((name, partitions), []).append(seconds)
                    print(
                        f"run {run + 1} {name:13s} {partitions:5d} partitions {seconds:7.3f} s",
                        flush=True,
                    )
        print(f"\nCreateTopics of one topic, best / median of {args.runs}:")
        for partitions in args.partitions:
            best = {}
            for name in peers:
                got = times[(name, partitions)]
                best[name] = min(got)
                print(
                    f"  {name:13s} {partitions:5d} partitions {min(got):7.3f} s best"
                    f" {statistics.median(got):7.3f} s median"
                    f" ({min(got) / partitions * 1e3:.3f} ms per partition)"
                )
            ratio = best["tiered-mq"] / best["tansu-memory"]
            print(f"  ratio tiered-mq / tansu-memory: {ratio:.2f}x (lower is better)")
        print(f"\nphysical reference: one fsync of a small file on this disk {fsync * 1e3:.3f} ms")
        if per_partition is None:
            print("  (no strace: fsyncs per partition not counted)")
        else:
            print(f"  our broker: {per_partition:.2f} fsyncs per created partition (strace)")
            for partitions in args.partitions:
                print(
                    f"  {partitions:5d} partitions x {per_partition:.2f} fsyncs x"
                    f" {fsync * 1e3:.3f} ms = {partitions * per_partition * fsync:.3f} s"
                )
    finally:
        for peer in peers.values():
            peer.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
