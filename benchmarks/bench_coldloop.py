"""Event-loop cost of the cold tier's tiering passes: an idle pass by manifest size, and the
first pass of a partition opened from disk (a broker's start).

An uploader runs a pass every ``remote.log.manager.task.interval.ms`` (1 s) for every tiered
partition this broker leads, on the event loop. Two figures, each on a real hot.LocalLog and a
``memory://`` store (no bucket latency, so what is timed is the loop's own work):

  idle pass:   mean time of a pass with nothing to upload nor delete, for a partition whose
               manifest holds 0, 1,000 and 10,000 remote segments; compared with the pass of
               the empty manifest (the ratio should stay near 1: no per-entry work)
  first pass:  a partition of ``--segments`` rolled segments, all uploaded, closed and opened
               again: its first pass's time and the ``.index``/``.timeindex`` files it read
               on the loop (0: the local log's retention keeps the oldest segment by its
               time index's last entry, read alone, hot/retention.py; an uploaded segment
               is not asked for its next offset, which read both of every rolled segment before)

Measured on the 2-core machine (noisy), before -> after the cold-loop changes: idle pass
43.6 -> 16.0 us (empty manifest), 854 -> 24 us (1,000 remote segments), 6,127 -> 17.5 us
(10,000); first pass after a reopen with 30 uploaded segments 2.51 -> 1.03 ms, 60 -> 2 index
files read.

    python benchmarks/bench_coldloop.py [--passes 500] [--segments 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prometheus_client import CollectorRegistry

from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import PartitionUploader, UploaderSettings
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import Record, encode_batch
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("bench", 0)
NOW = int(time.time() * 1000)


def open_log(path: Path) -> LocalLog:
    config = LogConfig.from_properties(
        {"remote.storage.enable": "true", "index.interval.bytes": "256"}
    )
    return LocalLog.open(path, config)


def entry(base: int) -> RemoteSegment:
    return RemoteSegment(
        base_offset=base,
        end_offset=base + 99,
        first_timestamp=NOW,
        max_timestamp=NOW,
        size_bytes=4096,
        record_count=100,
        leader_epochs=[(0, base)],
        upload_id=f"{base:016x}",
        uploader_epoch=0,
        objects={"log": f"p/topics/bench/0/{base:020d}.log", "index": None, "snapshot": None},
        crc32c=1,
        state=SegmentState.COPY_FINISHED,
    )


async def leader(store: ThreadedStore, log: LocalLog, cache: Path) -> PartitionUploader:
    rlm = RemoteLogManager(
        store,
        "p",
        cache,
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600),
        registry=CollectorRegistry(),
    )
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()  # the benchmark runs the passes
    return uploader


async def idle_pass_us(entries: int, passes: int, tmp: Path) -> float:
    store = ThreadedStore(MemoryStore(), inline=True)
    manifest = PartitionManifest(TP.topic, TP.partition)
    manifest.segments = [entry(i * 100) for i in range(entries)]
    await store.put(layout.manifest_key("p", TP.topic, TP.partition), manifest.to_json())
    log = open_log(tmp / f"idle-{entries}" / "bench-0")
    log.truncate_fully_and_start_at(entries * 100)  # older data in the bucket only
    uploader = await leader(store, log, tmp / f"cache-{entries}")
    for _ in range(3):
        await uploader.run_pass()
    started = time.perf_counter()
    for _ in range(passes):
        await uploader.run_pass()
    elapsed = time.perf_counter() - started
    log.close()
    return elapsed / passes * 1e6


async def first_pass(segments: int, tmp: Path) -> tuple[float, int]:
    store = ThreadedStore(MemoryStore(), inline=True)
    path = tmp / "first" / "bench-0"
    log = open_log(path)
    for _ in range(segments):
        for _ in range(20):
            records = bytearray(encode_batch([Record(0, NOW, b"k", b"v" * 100)] * 10))
            log.append_as_leader(records, 0)
        log.roll()
    await (await leader(store, log, tmp / "cache-a")).run_pass()
    log.close()

    reads = 0
    original = Path.read_bytes

    def counted(p: Path) -> bytes:
        nonlocal reads
        reads += p.suffix in (".index", ".timeindex")
        return original(p)

    log = open_log(path)
    uploader = await leader(store, log, tmp / "cache-b")
    Path.read_bytes = counted  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        await uploader.run_pass()
        elapsed = time.perf_counter() - started
    finally:
        Path.read_bytes = original  # type: ignore[method-assign]
    log.close()
    return elapsed * 1000, reads


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=500)
    parser.add_argument("--segments", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = await idle_pass_us(0, args.passes, tmp)
        print(f"idle pass, empty manifest:        {base:8.1f} us")
        for entries in (1_000, 10_000):
            us = await idle_pass_us(entries, args.passes, tmp)
            print(f"idle pass, {entries:>6,} remote segments: {us:8.1f} us ({us / base:.2f}x)")
        ms, reads = await first_pass(args.segments, tmp)
        print(
            f"first pass after a reopen, {args.segments} uploaded segments: {ms:.2f} ms, "
            f"{reads} index files read on the loop"
        )


if __name__ == "__main__":
    asyncio.run(main())
