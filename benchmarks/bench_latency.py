"""Latency at a steady 5,000 msg/s (linger.ms=0, acks=all): produce ack p99 and end-to-end p99.

A confluent-kafka producer sends ``--rate`` messages per second for ``--seconds`` seconds to a
fresh 1-partition topic, each value carrying its send time (``time.time_ns()``); the ack
latency is send -> delivery callback. A consumer in another process (assigned to the partition
from its end, ``fetch.wait.max.ms`` 100) records receive time - send time: end-to-end latency.
The same load runs against Tansu (memory storage) in the same run, for the ratio. The producer
sleeps between sends, as an application at that rate would: waiting in ``poll()`` instead spins
(its timeout is whole milliseconds, so 0.2 ms becomes 0) and took a whole core from the broker
on a 2-core machine, which put the p99 anywhere between 3 and 60 ms. On a small machine the
clients still compete with the broker for cores; ``--nice N`` runs them at niceness N (both
brokers stay at 0), as if the broker had its own host.
Targets for tiered-mq: p99 ack <= 10 ms, p99 end-to-end <= 50 ms. Each broker's CPU use over
its run (user + system from ``/proc``, in % of one core) is printed beside its latencies.

Run: ``python benchmarks/bench_latency.py [--rate R] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import struct
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _peers import TansuProcess, cpu_seconds, ours
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

STAMP = struct.Struct(">q")
PAD = b"p" * 92  # 100-byte values


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _consumer_main(bootstrap: str, topic: str, n: int, ready: Any, out: Any) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"lat-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "fetch.min.bytes": 1,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    latencies: list[float] = []
    deadline = time.monotonic() + 120
    consumer.poll(0.5)  # connect before the producer starts
    ready.set()
    while len(latencies) < n + 1 and time.monotonic() < deadline:  # + the warm-up message
        m = consumer.poll(0.1)  # returns as soon as one message is there (consume() waits)
        if m is not None and m.error() is None:
            latencies.append((time.time_ns() - STAMP.unpack_from(m.value())[0]) / 1e6)
    consumer.close()
    out.put(latencies)


def run_load(bootstrap: str, rate: int, seconds: float) -> tuple[list[float], list[float]]:
    topic = f"lat-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    n = int(rate * seconds)
    ctx = mp.get_context("spawn")
    ready, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_consumer_main, args=(bootstrap, topic, n, ready, out))
    proc.start()
    ready.wait(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
    acks: list[float] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acks.append((time.time_ns() - STAMP.unpack_from(msg.value())[0]) / 1e6)

    producer.produce(topic, b"\0" * 8 + PAD)  # warm up the connection (not measured)
    producer.flush(10)
    acks.clear()
    interval = 1.0 / rate
    start = time.perf_counter()
    for i in range(n):
        # sleep to the next send time: poll() takes whole milliseconds (a shorter timeout is 0),
        # so waiting in poll() spins a core the brokers need on a small machine
        if (delay := start + i * interval - time.perf_counter()) > 0:
            time.sleep(delay)
        producer.produce(topic, STAMP.pack(time.time_ns()) + PAD, on_delivery=on_delivery)
        producer.poll(0)  # delivery callbacks: at most one send interval (0.2 ms) late
    producer.flush(30)
    e2e: list[float] = out.get(timeout=150)
    proc.join(30)
    return acks, e2e[1:]  # the first is the warm-up message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness of the client processes (0: same priority as the brokers)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    peers: dict[str, Any] = {}
    try:
        peers["tiered-mq"] = ours(work / "ours", "--log-level", "WARNING")
        peers["tansu-memory"] = TansuProcess(work / "tansu.log").start()
        if args.nice:
            os.nice(args.nice)  # the brokers (already started) keep priority over the clients
        results = {}
        cpu: dict[str, float] = {}
        for name, peer in peers.items():
            cpu_before, wall_before = cpu_seconds(peer.proc.pid), time.monotonic()
            acks, e2e = run_load(peer.bootstrap, args.rate, args.seconds)
            cpu[name] = (cpu_seconds(peer.proc.pid) - cpu_before) / (time.monotonic() - wall_before)
            results[name] = (
                percentile(acks, 0.5),
                percentile(acks, 0.99),
                percentile(e2e, 0.5),
                percentile(e2e, 0.99),
                len(acks),
                len(e2e),
            )
        print(f"{args.rate} msg/s for {args.seconds:.0f} s, linger.ms=0, acks=all, 100 B values")
        for name, (a50, a99, e50, e99, na, ne) in results.items():
            print(
                f"  {name:13s} ack p50 {a50:6.2f} ms  p99 {a99:6.2f} ms   "
                f"e2e p50 {e50:6.2f} ms  p99 {e99:6.2f} ms   ({na} acks, {ne} received)   "
                f"broker CPU {cpu[name]:.0%} of a core"
            )
        o, t = results["tiered-mq"], results["tansu-memory"]
        print(
            f"  ratio tansu / tiered-mq p99 (>1 = we are faster): ack {t[1] / o[1]:.2f}x  "
            f"e2e {t[3] / o[3]:.2f}x"
        )
        print(
            f"  targets tiered-mq: ack p99 <= 10 ms ({'met' if o[1] <= 10 else 'MISSED'}), "
            f"e2e p99 <= 50 ms ({'met' if o[3] <= 50 else 'MISSED'})"
        )
    finally:
        for peer in peers.values():
            peer.stop()


if __name__ == "__main__":
    main()
