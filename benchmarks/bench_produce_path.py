"""Broker CPU per small Produce request, in process: decode -> handle -> encode, no socket.

What librdkafka sends under many-partition load (bench_partitions.py: linger.ms=5, one Produce
request per partition): Produce v8 (``--version``; the newest the broker serves), acks=-1, one
topic, one partition, one uncompressed batch of ``--records`` records of ``--value`` bytes.
Requests go round-robin over ``--partitions`` partitions of an in-process broker (the settings
of tests/unit/broker/conftest.py's ``start_broker``) through ``KafkaConnection._handle``:
request header and body decode, the Produce handler (validation, the leader append to the page
cache) and the response encode; no socket, no event-loop wake-up. Each request gets a fresh
copy of its frame, as the receive path hands the handler a new bytearray.

Prints the best of ``--runs`` CPU µs per request (``time.process_time``, so not counting other
processes on the machine), and as the physical reference the CPU cost of a bare ``os.write``
of the same batch bytes to a file (what the append could cost at best). ``--profile`` adds a
cProfile breakdown of one run. With ``--idempotent`` the batches carry a producer id and
consecutive sequences (librdkafka's enable.idempotence=true). Usage::

    python benchmarks/bench_produce_path.py [--requests 20000] [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.server import KafkaConnection
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.protocol.codec import decode_response, encode_request
from tiered_mq.record.file_records import FileRegion
from tiered_mq.record.records import encode_batch

TOPIC = "bench"
PRODUCER_ID = 1000


def _frames(args: argparse.Namespace, runs: int) -> list[list[bytes]]:
    """Request frames (without the size prefix) for every run: one batch per request."""
    value = b"v" * args.value
    items = [(b"k%d" % i, value, None, 1_700_000_000_000 + i) for i in range(args.records)]
    sequences = [0] * args.partitions
    out: list[list[bytes]] = []
    template: dict[int, bytes] = {}
    for run in range(runs):
        frames = []
        for i in range(args.requests):
            p = i % args.partitions
            if args.idempotent:
                batch = encode_batch(
                    items, producer_id=PRODUCER_ID, producer_epoch=0, base_sequence=sequences[p]
                )
                sequences[p] += args.records
            elif p not in template:
                template[p] = encode_batch(items)
            body = {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 30000,
                "topic_data": [
                    {
                        "name": TOPIC,
                        "partition_data": [
                            {"index": p, "records": batch if args.idempotent else template[p]}
                        ],
                    }
                ],
            }
            frame = encode_request(ApiKey.PRODUCE, args.version, run * args.requests + i, "b", body)
            frames.append(bytes(frame[4:]))
        out.append(frames)
    return out


async def _run(
    conn: KafkaConnection, frames: list[bytes], profile: cProfile.Profile | None
) -> float:
    handle = conn._handle
    if profile is not None:
        profile.enable()
    chunks = None
    start = time.process_time()
    for frame in frames:
        chunks = await handle(bytearray(frame))
    elapsed = time.process_time() - start
    if profile is not None:
        profile.disable()
    assert chunks  # and the last answer is a success (every request takes the same path)
    payload = b"".join(bytes(c) for c in chunks if not isinstance(c, FileRegion))[4:]
    [topic] = decode_response(ApiKey.PRODUCE, _version(frames[-1]), payload)["responses"]
    [partition] = topic["partition_responses"]
    assert partition["error_code"] == 0, partition
    return elapsed


def _version(frame: bytes) -> int:
    """The api version of a request frame."""
    return int.from_bytes(frame[2:4], "big")


def _os_write_reference(batch_size: int, n: int, directory: Path) -> float:
    """CPU µs of one bare ``os.write`` of ``batch_size`` bytes, appended to a file."""
    data = os.urandom(batch_size)
    best = float("inf")
    for _ in range(3):
        fd = os.open(directory / "ref.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            start = time.process_time()
            for _ in range(n):
                os.write(fd, data)
            best = min(best, time.process_time() - start)
        finally:
            os.close(fd)
    return best / n * 1e6


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--partitions", type=int, default=32)
    ap.add_argument("--records", type=int, default=10)
    ap.add_argument("--value", type=int, default=100)
    ap.add_argument("--version", type=int, default=8)
    ap.add_argument("--idempotent", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    runs = args.runs + (1 if args.profile else 0)
    all_frames = _frames(args, runs + 1)  # +1: warm-up
    batch_size = len(encode_batch([(b"k0", b"v" * args.value, None, 0)] * args.records))
    with tempfile.TemporaryDirectory(prefix="bench_produce_") as tmp:
        config = BrokerConfig(
            Path(tmp) / "data", port=0, overrides={"offsets.topic.num.partitions": "1"}
        )
        broker = Broker(config)
        await broker.start()
        try:
            await broker.topic_registry.create_topic(TOPIC, args.partitions, {})
            conn = KafkaConnection(broker.server)
            conn.peer = "bench"
            await _run(conn, all_frames[0], None)
            times = [await _run(conn, f, None) for f in all_frames[1 : args.runs + 1]]
            profile = None
            if args.profile:
                profile = cProfile.Profile()
                await _run(conn, all_frames[-1], profile)
        finally:
            await broker.close()
        reference = _os_write_reference(batch_size, args.requests, Path(tmp))
    best = min(times) / args.requests * 1e6
    print(
        f"Produce v{args.version}, 1 batch of {args.records} x {args.value} B "
        f"({batch_size} B), {args.partitions} partitions, "
        f"{'idempotent' if args.idempotent else 'not idempotent'}, acks=-1"
    )
    print(f"runs (CPU µs/request): {', '.join(f'{t / args.requests * 1e6:.1f}' for t in times)}")
    print(f"best: {best:.1f} CPU µs/request")
    print(f"bare os.write of {batch_size} B: {reference:.2f} CPU µs ({best / reference:.1f}x)")
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    asyncio.run(main())
