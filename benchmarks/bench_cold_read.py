"""Consumer replay from the bucket vs from the local disk, on a SeaweedFS-backed dev broker.

Starts SeaweedFS (tests/integration/s3_server.py) and a `tiered-mq dev` broker
(tests/integration/broker_process.py) whose topic has remote.storage.enable=true, then in one
run:

  produce:  N messages of 100 bytes (confluent-kafka), segments uploaded as they roll
            (uploader throughput: .log bytes uploaded / wall time from first to last upload)
  hot:      confluent-kafka consumes all N from offset 0 while every segment is still local
            (twice; the best run counts, as for cold)
  tier:     local.retention.bytes=1 (AlterConfigs): the local segments go, the bucket keeps them
  cold:     the same consumer replay, now served from the bucket through the chunk cache,
            while the broker's RSS is sampled every 50 ms

and prints messages/s and MB/s of both replays, the ratio cold / hot (the peer figure is the
hot replay of the same broker: sendfile from the page cache), the broker's peak RSS during the
cold replay next to the configured cache size, and the uploader throughput.

    python benchmarks/bench_cold_read.py [--messages 1000000] [--segment-mb 16] [--cache-mb 256]
        [--queue-backoff-ms 5]   (a tuned consumer; default: librdkafka's own pacing, 1 s)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS

TOPIC = "bench-cold"
SET = AlterConfigOpType.SET
ROUNDS = 2  # replays of each kind; the best counts (the machine is shared and noisy)


def metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def all_uploaded(port: int, log_dir: Path) -> bool:
    """Every rolled local segment is in the bucket and nothing is left to copy."""
    m = metrics(port)
    labels = f'{{partition="0",topic="{TOPIC}"}}'
    rolled = len(list(log_dir.glob("*.log"))) - 1
    remote = m.get("tiered_mq_remote_log_segments" + labels, -1.0)
    return m.get("tiered_mq_remote_copy_lag_segments" + labels, -1.0) == 0 and remote >= rolled


def fetch_requests(port: int) -> float:
    return sum(
        v
        for k, v in metrics(port).items()
        if k.startswith("tiered_mq_requests_total") and 'api="fetch"' in k
    )


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def produce(
    bootstrap: str, count: int, metrics_port: int, log_dir: Path
) -> tuple[float, float, float]:
    """Returns (produce seconds, uploaded .log-ish bytes, upload wall seconds)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    value = b"v" * 100
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            with_bytes = metrics(metrics_port).get("tiered_mq_remote_upload_bytes_total", 0.0)
            samples.append((time.perf_counter(), with_bytes))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(TOPIC, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0
    produce_s = time.perf_counter() - start
    deadline = time.monotonic() + 300
    while not all_uploaded(metrics_port, log_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.3)
    stop.set()
    sampler.join()
    moving = [(t, b) for t, b in samples if b > 0]
    total = samples[-1][1]
    first = next((t for t, b in samples if b > 0), samples[-1][0])
    last = next(t for t, b in moving if b == total) if moving else first
    # the first sample with bytes > 0 is already one interval late: count it from the sample before
    return produce_s, total, max(last - first + 0.1, 1e-3)


def replay(bootstrap: str, count: int, group: str, backoff_ms: int = 0) -> tuple[float, int]:
    conf: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "fetch.max.bytes": 52_428_800,
        "max.partition.fetch.bytes": 4_194_304,
        "queued.max.messages.kbytes": 262_144,
    }
    if backoff_ms:
        conf["fetch.queue.backoff.ms"] = backoff_ms
    consumer = Consumer(conf)
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got = 0
    payload = 0
    last_offset = -1
    start = time.perf_counter()
    while got < count:
        batch = consumer.consume(10000, timeout=30)
        if not batch:
            raise RuntimeError(f"replay stalled after {got} messages")
        for m in batch:
            if m.error() is not None:
                raise RuntimeError(str(m.error()))
            offset = m.offset()
            if offset != last_offset + 1:
                raise RuntimeError(f"offset {offset} after {last_offset}")
            last_offset = offset
            payload += len(m.value())
        got += len(batch)
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed, payload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--segment-mb", type=int, default=16)
    ap.add_argument("--cache-mb", type=int, default=256)
    ap.add_argument(
        "--queue-backoff-ms", type=int, default=0, help="consumer fetch.queue.backoff.ms"
    )
    ap.add_argument("--remote-fetch-mb", type=int, default=0, help="0: the broker's default")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    server = SeaweedFS(work / "seaweedfs")
    server.start()
    bucket = server.new_bucket()
    metrics_port = free_port()
    cache_bytes = args.cache_mb * 1024 * 1024
    configs = [
        "remote.log.manager.task.interval.ms=500",
        "log.retention.check.interval.ms=500",
        "log.segment.delete.delay.ms=0",
        f"remote.log.reader.cache.bytes={cache_bytes}",
        f"segment.bytes={args.segment_mb * 1024 * 1024}",
    ]
    if args.remote_fetch_mb:
        configs.append(f"remote.log.reader.fetch.max.bytes={args.remote_fetch_mb << 20}")
    extra = ["--cold-url", f"s3://{bucket}/bench", "--s3-endpoint", server.endpoint_url]
    extra += ["--metrics-port", str(metrics_port), "--log-level", "WARNING"]
    for c in configs:
        extra += ["--config", c]
    env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    broker = BrokerProcess(work / "broker", extra_args=extra, env=env)
    try:
        broker.start()
        assert broker.proc is not None
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        tiered = {"remote.storage.enable": "true"}
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=tiered)])[TOPIC].result(10)

        produce_s, uploaded, upload_s = produce(
            broker.bootstrap, args.messages, metrics_port, broker.data_dir / f"{TOPIC}-0"
        )
        backoff = f"{args.queue_backoff_ms} ms" if args.queue_backoff_ms else "default (1 s)"
        print(
            f"config:   chunk cache {args.cache_mb} MiB, segments {args.segment_mb} MiB, "
            f"consumer fetch.queue.backoff.ms {backoff}"
        )
        print(f"produce:  {args.messages / produce_s:,.0f} msg/s ({produce_s:.1f} s)")
        print(
            f"uploader: {uploaded / upload_s / 1e6:.1f} MB/s "
            f"({uploaded / 1e6:.1f} MB in {upload_s:.1f} s, concurrent with produce)"
        )

        def run(group: str) -> tuple[float, int]:
            return replay(broker.bootstrap, args.messages, group, args.queue_backoff_ms)

        fetches_before = fetch_requests(metrics_port)
        hot_runs = [run(f"hot-{i}") for i in range(ROUNDS)]
        hot_s, payload = min(hot_runs)
        hot_fetches = fetch_requests(metrics_port) - fetches_before
        local_files = sorted((broker.data_dir / f"{TOPIC}-0").glob("*.log"))
        print(
            f"hot:      {args.messages / hot_s:,.0f} msg/s, {payload / hot_s / 1e6:.1f} MB/s "
            f"payload ({len(local_files)} local segments, {hot_fetches:.0f} fetches)"
        )

        entry = ConfigEntry("local.retention.bytes", "1", incremental_operation=SET)
        resource = ConfigResource("topic", TOPIC, incremental_configs=[entry])
        admin.incremental_alter_configs([resource])[resource].result(10)
        del admin  # no client left to log reconnects once the broker stops
        deadline = time.monotonic() + 120
        while len(list((broker.data_dir / f"{TOPIC}-0").glob("*.log"))) > 1:
            if time.monotonic() > deadline:
                raise RuntimeError("local segments not deleted")
            time.sleep(0.2)
        rss_before = rss_bytes(broker.proc.pid)
        peak = [rss_before]
        done = threading.Event()

        def watch(pid: int) -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_bytes(pid))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, args=(broker.proc.pid,), daemon=True)
        watcher.start()
        fetches_before = fetch_requests(metrics_port)
        got_before = metrics(metrics_port).get("tiered_mq_remote_get_bytes_total", 0.0)
        cold_runs = [run(f"cold-{i}") for i in range(ROUNDS)]
        cold_s, payload = min(cold_runs)
        cold_fetches = fetch_requests(metrics_port) - fetches_before
        done.set()
        watcher.join()
        m = metrics(metrics_port)
        got = m.get("tiered_mq_remote_get_bytes_total", 0.0) - got_before
        print(
            f"cold:     {args.messages / cold_s:,.0f} msg/s, {payload / cold_s / 1e6:.1f} MB/s "
            f"payload (1 local segment; {got / 1e6:.1f} MB fetched from S3 in {ROUNDS} replays, "
            f"{got / ROUNDS / 1e6:.1f} MB per replay of {uploaded / 1e6:.1f} MB uploaded; "
            f"{cold_fetches:.0f} fetches)"
        )
        print(
            "runs (msg/s): hot "
            + ", ".join(f"{args.messages / t:,.0f}" for t, _ in hot_runs)
            + "; cold "
            + ", ".join(f"{args.messages / t:,.0f}" for t, _ in cold_runs)
        )
        print(f"ratio cold/hot (best of {ROUNDS} each): {hot_s / cold_s:.2f}x (target >= 0.8x)")
        print(
            f"broker RSS during cold replay: peak {peak[0] / 2**20:.0f} MiB "
            f"(before {rss_before / 2**20:.0f} MiB, +{(peak[0] - rss_before) / 2**20:.0f} MiB); "
            f"chunk cache {args.cache_mb} MiB on disk, holding "
            f"{m.get('tiered_mq_remote_cache_bytes', 0) / 2**20:.0f} MiB at the end"
        )
    finally:
        broker.stop()
        server.close()


if __name__ == "__main__":
    main()
