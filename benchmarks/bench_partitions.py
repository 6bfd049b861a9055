"""W2: many partitions, many clients: tiered-mq against Tansu (memory storage).

Per broker and run: create a fresh topic of ``--partitions`` partitions (32); ``--producers``
confluent-kafka producer processes (4; linger.ms=5, acks=all, as bench_broker.py) write
``--messages`` 100-byte values in all (1,000,000), each message to the next partition in turn
(round-robin; ``--keyed``: a distinct key per message, librdkafka's default partitioner); then a
consumer group of ``--consumers`` confluent-kafka consumer processes (4; subscribe, the tuned
consumer of bench_broker.py) reads every message.

Each client process is started and connected first, then all start together (an Event), so
process start-up is left out. Produce rate: messages / (last flush done - first produce call);
consume rate: messages / (last message received - first message received), so the group's
join (its initial rebalance delay differs between brokers) is left out too. The broker's CPU
seconds (``/proc/<pid>/stat``) are taken from the Event to the last client's end and given per
million records: the main figure, as the 2-core machine's wall-clock rates are noisy (the
client processes compete with the broker for the cores). Runs are interleaved (ours, Tansu,
ours, ...); the best of ``--runs`` is reported per broker (highest rate, lowest CPU) with the
ratios ours / Tansu (rates: higher is better; CPU: lower is better).

The broker's CPU per message depends on the batch sizes, and so on how fast the producers go
(each partition's batch holds what came in its linger.ms; librdkafka sends one Produce request
per partition batch): a broker that answers faster gets bigger batches, and the machine's load
moves all of it. So the CPU is also given per request the clients sent (librdkafka's
statistics, ``tx``, summed over the clients), with the messages per request: that figure
compares the brokers' own cost whatever the batch sizes. ``--rate R`` paces the producers to R
msg/s in all (each sends its share a millisecond at a time): small batches, as many
partitions at a moderate rate give; the produce rate is then R, unless a broker cannot keep
up.

``--metrics-port N`` runs our broker with its Prometheus endpoint on (off by default, as in
the other benchmarks).

Run: ``python benchmarks/bench_partitions.py [--messages N] [--partitions P] [--producers N]
[--consumers N] [--runs R] [--keyed] [--rate R]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import tempfile
import time
import uuid
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from _peers import OursProcess, TansuProcess, cpu_seconds
from bench_broker import PRODUCER, TUNED, VALUE, create_topic
from confluent_kafka import Consumer, Producer

_MP = mp.get_context("spawn")  # librdkafka's threads do not survive a fork
_STATS = {"statistics.interval.ms": 100}


def _requests_sent(poll: Any, stats: list[str]) -> int:
    """Requests the client sent to the brokers so far (librdkafka's statistics, ``tx``): the
    next statistics after this call (``poll`` serves their callback), else the last ones."""
    seen = len(stats)
    deadline = time.monotonic() + 1
    while len(stats) == seen and time.monotonic() < deadline:
        poll(0.05)
    return sum(b["tx"] for b in json.loads(stats[-1])["brokers"].values()) if stats else 0


def _producer(
    bootstrap: str,
    topic: str,
    first: int,
    n: int,
    partitions: int,
    keyed: bool,
    rate: float,
    go: Event,
    out: Any,
) -> None:
    stats: list[str] = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, **PRODUCER, **_STATS, "stats_cb": stats.append}
    )
    producer.list_topics(topic, 30)  # connected, metadata known
    go.wait()
    started = time.time()
    produce = producer.produce
    step = max(1, round(rate / 1000)) if rate else n  # paced: `step` messages a millisecond
    due = time.monotonic()
    for begin in range(first, first + n, step):
        for i in range(begin, min(begin + step, first + n)):
            kwargs: dict[str, Any] = {"key": b"%d" % i} if keyed else {"partition": i % partitions}
            try:
                produce(topic, VALUE, **kwargs)
            except BufferError:
                producer.poll(0.01)
                produce(topic, VALUE, **kwargs)
        if rate:
            due += step / rate
            time.sleep(max(0.0, due - time.monotonic()))
    remaining = producer.flush(120)
    ended = time.time()
    out.put((started, ended, n - remaining, _requests_sent(producer.poll, stats)))


def _consumer(
    bootstrap: str, topic: str, group: str, n: int, got: Any, go: Event, out: Any
) -> None:
    stats: list[str] = []
    consumer = Consumer(
        {
            **_STATS,
            "stats_cb": stats.append,
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            **TUNED,
        }
    )
    consumer.list_topics(topic, 30)
    go.wait()
    consumer.subscribe([topic])
    first = last = 0.0
    mine = 0
    deadline = time.monotonic() + 120
    while got.value < n and time.monotonic() < deadline:
        messages = consumer.consume(10000, 0.2)
        count = sum(1 for m in messages if m.error() is None)
        if count:
            last = time.time()
            first = first or last
            mine += count
            with got.get_lock():
                got.value += count
    requests = _requests_sent(consumer.poll, stats)
    consumer.close()
    out.put((first, last, mine, requests))


@dataclass
class Phase:
    rate: float  # msg/s
    cpu_per_million: float  # broker CPU s per 1M records
    cpu_per_request: float  # broker CPU us per request the clients sent
    per_request: float  # messages per request


def _result(out: Any, procs: list[Any]) -> tuple[float, float, int, int]:
    """The next client's (start, end, messages, requests); RuntimeError when a client died
    without one."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            return tuple(out.get(timeout=1))
        except queue.Empty:
            if any(p.exitcode not in (None, 0) for p in procs):
                raise RuntimeError("a client process failed") from None
    raise TimeoutError("clients did not finish in 180 s")


def _run_clients(pid: int, n: int, targets: list[tuple[Any, tuple[Any, ...]]]) -> Phase:
    """Start one process per (function, args) (each gets ``go`` and a result queue last), let
    them go together, and time them: (first start .. last end) over the messages they report."""
    go, out = _MP.Event(), _MP.Queue()
    procs = [_MP.Process(target=f, args=(*args, go, out)) for f, args in targets]
    for p in procs:
        p.start()
    time.sleep(0.5)  # nothing to wait for but each client's connect (they wait on ``go``)
    cpu0 = cpu_seconds(pid)
    go.set()
    results = [_result(out, procs) for _ in procs]
    cpu1 = cpu_seconds(pid)
    for p in procs:
        p.join(30)
    count = sum(r[2] for r in results)
    if count < n:
        raise RuntimeError(f"{count} of {n} messages")
    started = min(r[0] for r in results if r[0])
    ended = max(r[1] for r in results)
    requests = max(1, sum(r[3] for r in results))
    cpu = cpu1 - cpu0
    return Phase(n / (ended - started), cpu * 1e6 / n, cpu * 1e6 / requests, n / requests)


def run_once(peer: Any, args: argparse.Namespace) -> tuple[Phase, Phase]:
    n, parts = args.messages, args.partitions
    topic = create_topic(peer.bootstrap, parts)
    share = -(-n // args.producers)
    pace = (args.keyed, args.rate / args.producers)
    producers = [
        (
            _producer,
            (peer.bootstrap, topic, i * share, min(share, n - i * share), parts, *pace),
        )
        for i in range(args.producers)
    ]
    produced = _run_clients(peer.pid, n, producers)
    got = _MP.Value("q", 0)
    group = f"w2-{uuid.uuid4().hex[:6]}"
    consumers = [(_consumer, (peer.bootstrap, topic, group, n, got)) for _ in range(args.consumers)]
    consumed = _run_clients(peer.pid, n, consumers)
    return produced, consumed


def _best(phases: list[Phase]) -> Phase:
    """Highest rate, lowest CPU figures (each taken on its own), mean messages per request."""
    return Phase(
        max(p.rate for p in phases),
        min(p.cpu_per_million for p in phases),
        min(p.cpu_per_request for p in phases),
        sum(p.per_request for p in phases) / len(phases),
    )


def _line(p: Phase, c: Phase) -> str:
    return (
        f"produce {p.rate:9,.0f} msg/s {p.cpu_per_million:5.2f} CPU s/1M"
        f" {p.cpu_per_request:4.0f} us/request ({p.per_request:4.0f} msg/request)"
        f"  consume {c.rate:9,.0f} msg/s {c.cpu_per_million:5.2f} CPU s/1M"
        f" {c.cpu_per_request:4.0f} us/request"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--keyed", action="store_true", help="keyed messages, not round-robin")
    parser.add_argument(
        "--rate", type=float, default=0, help="offered msg/s in all (0: as fast as they can)"
    )
    parser.add_argument("--metrics-port", type=int, default=0, help="our broker's (0: off)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-partitions-"))
    peers: dict[str, Any] = {}
    try:
        peers["tiered-mq"] = OursProcess(work / "ours", "--metrics-port", str(args.metrics_port))
        peers["tansu-memory"] = TansuProcess(work / "tansu.log").start()
        runs: dict[str, list[tuple[Phase, Phase]]] = {name: [] for name in peers}
        for run in range(args.runs):
            for name, peer in peers.items():
                p, c = run_once(peer, args)
                runs[name].append((p, c))
                print(f"run {run + 1} {name:13s} {_line(p, c)}", flush=True)
        print(
            f"\nbest of {args.runs}, {args.messages:,} x {len(VALUE)} B, {args.partitions}"
            f" partitions, {args.producers} producers ({'keyed' if args.keyed else 'round-robin'},"
            f" acks=all{f', paced to {args.rate:,.0f} msg/s' if args.rate else ''}),"
            f" {args.consumers} consumers in a group"
        )
        best = {
            name: (_best([p for p, _ in r]), _best([c for _, c in r])) for name, r in runs.items()
        }
        for name, (p, c) in best.items():
            print(f"  {name:13s} {_line(p, c)}")
        print("  ratio tiered-mq / tansu-memory (rate: higher is better, CPU: lower is better):")
        for phase, ours_, peer in zip(("produce", "consume"), *best.values(), strict=True):
            print(
                f"    {phase} {ours_.rate / peer.rate:.2f}x rate,"
                f" {ours_.cpu_per_million / peer.cpu_per_million:.2f}x CPU per message,"
                f" {ours_.cpu_per_request / peer.cpu_per_request:.2f}x CPU per request"
            )
    finally:
        for peer in peers.values():
            peer.stop()


if __name__ == "__main__":
    main()
