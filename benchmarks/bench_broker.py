"""W1: produce then consume 1,000,000 100-byte values, tiered-mq against Tansu.

Per broker and run: create a fresh 1-partition topic; produce with confluent-kafka
(linger.ms=5, batch.size=1 MiB, acks=all) and time until ``flush()`` returns; then read every
message from offset 0 with a confluent-kafka consumer with DEFAULT settings (only
bootstrap.servers, group.id, auto.offset.reset=earliest, enable.auto.commit=false; assign, then
``consume(batch)``) and time that. A second consumer, tuned with one setting
(fetch.queue.backoff.ms=5 instead of librdkafka's 1 s pause once 100,000 records are queued),
is timed as well: the default one runs at the pace of that pause against any broker faster
than the application (see README), the tuned one at the brokers' and the client's own pace.
Runs are interleaved (ours, Tansu memory, [Tansu S3], ours, ...);
the best of ``--runs`` is reported per broker with the ratio ours / peer (target >= 1.0), and
our broker's peak RSS (VmHWM, target <= 300 MB).

Each run also prints the CPU time each broker process spent on the produce and on the tuned
consume (``/proc/<pid>/stat``), beside this script's own CPU time for the produce: when the
client's CPU time is close to the wall time and the broker's is a small fraction of it, the
rate is bounded by the client, and the ratio between brokers moves with the machine's noise.

With ``--s3`` Tansu also runs on an S3 bucket served by SeaweedFS
(tests/integration/s3_server.py). Our broker keeps the hot log on local disk in both cases.

Run: ``python benchmarks/bench_broker.py [--messages N] [--runs R] [--s3]``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _peers import BrokerProcess, TansuProcess, cpu_seconds, ours, peak_rss_mb
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

VALUE = b"x" * 100


def create_topic(bootstrap: str, partitions: int = 1) -> str:
    name = f"w1-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


# the W1 producer (bench_partitions.py's too), without bootstrap.servers
PRODUCER = {
    "linger.ms": 5,
    "batch.size": 1 << 20,
    "acks": "all",
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 2_000_000,
}


def produce(bootstrap: str, topic: str, n: int, extra: dict[str, Any] | None = None) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER, **(extra or {})})
    started = time.perf_counter()
    produce_ = producer.produce
    for _ in range(n):
        try:
            produce_(topic, VALUE)
        except BufferError:
            producer.poll(0.01)
            produce_(topic, VALUE)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    if remaining:
        raise RuntimeError(f"{remaining} messages not delivered")
    return n / elapsed


# librdkafka postpones the next fetch by fetch.queue.backoff.ms (1 s) once its queue holds
# queued.min.messages; the tuned line shortens that pause, its only change (every broker)
TUNED = {"fetch.queue.backoff.ms": 5}


def consume(
    bootstrap: str, topic: str, n: int, extra: dict[str, Any] | None = None, **kwargs: Any
) -> float:
    """Read ``n`` records of partition 0 from offset 0; msg/s. ``kwargs`` go to the Consumer
    (``logger=`` for librdkafka's log lines)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"w1-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **(extra or {}),
        },
        **kwargs,
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    started = time.perf_counter()
    deadline = started + 120
    while got < n and time.perf_counter() < deadline:
        for m in consumer.consume(10000, 1.0):
            if m.error() is None:
                got += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    if got < n:
        raise RuntimeError(f"consumed {got} of {n}")
    return n / elapsed


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--s3", action="store_true", help="also Tansu on SeaweedFS S3")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-broker-"))
    peers: dict[str, Any] = {}
    seaweed = None
    try:
        peers["tiered-mq"] = ours(work / "ours", "--log-level", "WARNING")
        peers["tansu-memory"] = TansuProcess(work / "tansu.log").start()
        if args.s3:
            from tests.integration.s3_server import shared_seaweedfs

            seaweed = shared_seaweedfs()
            bucket = seaweed.new_bucket()
            opts = seaweed.store_options()
            env = {
                "AWS_ENDPOINT": opts["endpoint_url"],
                "AWS_ALLOW_HTTP": "true",
                "AWS_ACCESS_KEY_ID": opts["access_key"],
                "AWS_SECRET_ACCESS_KEY": opts["secret_key"],
                "AWS_DEFAULT_REGION": opts["region"],
            }
            peers["tansu-s3"] = TansuProcess(work / "tansu-s3.log", f"s3://{bucket}/", env).start()
        best: dict[str, list[float]] = {name: [0.0, 0.0, 0.0] for name in peers}
        for run in range(args.runs):
            for name, peer in peers.items():
                topic = create_topic(peer.bootstrap)
                pid = peer.proc.pid
                cpu0, own0 = cpu_seconds(pid), own_cpu_seconds()
                p = produce(peer.bootstrap, topic, args.messages)
                cpu1, own1 = cpu_seconds(pid), own_cpu_seconds()
                c = consume(peer.bootstrap, topic, args.messages)
                cpu2 = cpu_seconds(pid)
                t = consume(peer.bootstrap, topic, args.messages, TUNED)
                cpu3 = cpu_seconds(pid)
                b = best[name]
                best[name] = [max(b[0], p), max(b[1], c), max(b[2], t)]
                print(
                    f"run {run + 1} {name:13s} produce {p:12,.0f} msg/s  consume {c:12,.0f} msg/s"
                    f"  (tuned consumer {t:12,.0f} msg/s)\n"
                    f"      CPU s: broker produce {cpu1 - cpu0:.2f} (client {own1 - own0:.2f},"
                    f" wall {args.messages / p:.2f})  broker tuned consume {cpu3 - cpu2:.2f}"
                    f" (wall {args.messages / t:.2f})"
                )
        ours_proc: BrokerProcess = peers["tiered-mq"]
        assert ours_proc.proc is not None
        rss = peak_rss_mb(ours_proc.proc.pid)
        print(f"\nbest of {args.runs}, {args.messages:,} x {len(VALUE)} B, 1 partition, acks=all")
        for name, (p, c, t) in best.items():
            print(
                f"  {name:13s} produce {p:12,.0f} msg/s  consume {c:12,.0f} msg/s"
                f"  (tuned consumer {t:12,.0f} msg/s)"
            )
        ours_p, ours_c, ours_t = best["tiered-mq"]
        for name, (p, c, t) in best.items():
            if name != "tiered-mq":
                print(
                    f"  ratio tiered-mq / {name}: produce {ours_p / p:.2f}x"
                    f"  consume (default consumer) {ours_c / c:.2f}x  (target >= 1.0)"
                    f"  tuned consumer {ours_t / t:.2f}x"
                )
        print(f"  tiered-mq peak RSS: {rss:.0f} MB (target <= 300 MB)")
    finally:
        for peer in peers.values():
            peer.stop()
        if seaweed is not None:
            seaweed.close()


if __name__ == "__main__":
    main()
