"""W1 consume with a default confluent-kafka consumer, with the broker's delivery rate capped.

The experiment behind the README's "Benchmarks" note on the default consumer: librdkafka stops
fetching a partition for ``fetch.queue.backoff.ms`` (1 s) whenever its queue holds
``queued.min.messages`` (100,000) records, so a default consumer reads fastest from a broker
whose delivery rate is just below the application's drain rate, and a faster broker makes it
slower. This script shows it by slowing the SAME broker down from outside and nothing else.

Per broker (ours, and Tansu in memory as the peer): produce 1,000,000 x 100 B once (the W1
producer), then, in interleaved rounds, read them all from offset 0 with bench_broker.py's
default consumer through a loopback TCP proxy that caps the broker-to-client bytes at each rate
of ``--caps`` (MB/s; 0 = no cap). The broker advertises the proxy's address, so every
connection of the client goes through it. Each line prints the rate and how many 1 s pauses
librdkafka logged ("queued.min.messages exceeded", from ``debug=fetch``). A last line per broker
is the tuned consumer (``fetch.queue.backoff.ms=5``), uncapped: the client's own pace.

Run: ``python benchmarks/bench_consumer_pause.py [--messages N] [--rounds R] [--caps 0,150,110]``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from _peers import BrokerProcess, TansuProcess, free_port
from bench_broker import TUNED, create_topic, produce
from bench_broker import consume as w1_consume

PAUSE_LINE = "queued.min.messages exceeded"
CHUNK = 64 * 1024
BURST_S = 0.005


class CappedProxy:
    """A loopback TCP proxy in a thread of its own; ``rate`` (bytes/s, 0 = none) caps the bytes
    from the broker to the clients, all connections together (a token bucket)."""

    def __init__(self, upstream_port: int) -> None:
        self.port = free_port()
        self.upstream_port = upstream_port
        self.rate = 0.0
        self._next_send = 0.0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self._ready.set()
        self._loop.run_forever()  # a daemon thread: ends with the script

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        await asyncio.gather(
            self._pump(reader, up_writer, capped=False),
            self._pump(up_reader, writer, capped=True),
            return_exceptions=True,
        )

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, capped: bool
    ) -> None:
        try:
            while chunk := await reader.read(CHUNK):
                if capped and self.rate > 0:  # credit for at most BURST_S of idle time
                    now = time.monotonic()
                    start = max(self._next_send, now - BURST_S)
                    self._next_send = start + len(chunk) / self.rate
                    if start > now:
                        await asyncio.sleep(start - now)
                writer.write(chunk)
                await writer.drain()
        finally:
            writer.close()


class PauseCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.pauses = 0

    def emit(self, record: logging.LogRecord) -> None:
        if PAUSE_LINE in record.getMessage():
            self.pauses += 1


def consume(bootstrap: str, topic: str, n: int, extra: dict[str, Any]) -> tuple[float, int]:
    """bench_broker.py's consumer, counting librdkafka's queue-full pauses: (msg/s, pauses)."""
    counter = PauseCounter()
    log = logging.getLogger(f"rdkafka-{uuid.uuid4().hex[:6]}")
    log.propagate = False
    log.addHandler(counter)
    log.setLevel(logging.DEBUG)
    rate = w1_consume(bootstrap, topic, n, {"debug": "fetch", **extra}, logger=log)
    return rate, counter.pauses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--caps", default="0,200,150,120,100,80", help="MB/s, 0 = no cap")
    args = parser.parse_args()
    caps = [float(c) for c in args.caps.split(",")]

    work = Path(tempfile.mkdtemp(prefix="bench-pause-"))
    processes: list[Any] = []
    routes: dict[str, tuple[str, CappedProxy | None]] = {}  # label -> (bootstrap, proxy)
    try:
        # ours: one broker, two listeners; PROXIED advertises the proxy's address
        direct, proxied = free_port(), free_port()
        proxy = CappedProxy(proxied)
        listeners = f"PLAINTEXT://127.0.0.1:{direct},PROXIED://127.0.0.1:{proxied}"
        advertised = f"PLAINTEXT://127.0.0.1:{direct},PROXIED://127.0.0.1:{proxy.port}"
        configs = {
            "listeners": listeners,
            "advertised.listeners": advertised,
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,PROXIED:PLAINTEXT",
        }
        extra = ["--log-level", "WARNING"]
        for key, value in configs.items():
            extra += ["--config", f"{key}={value}"]
        processes.append(BrokerProcess(work / "ours", port=direct, extra_args=extra).start())
        routes["tiered-mq"] = (f"127.0.0.1:{direct}", None)
        routes["tiered-mq proxied"] = (f"127.0.0.1:{proxy.port}", proxy)
        # Tansu: one listener, so one process per route (memory storage: each its own data)
        for label in ("tansu-memory", "tansu-memory proxied"):
            tansu = TansuProcess(work / f"{label.replace(' ', '-')}.log")
            route_proxy = CappedProxy(tansu.port) if "proxied" in label else None
            if route_proxy is not None:
                tansu.advertised_port = route_proxy.port
            processes.append(tansu.start())
            port = route_proxy.port if route_proxy is not None else tansu.port
            routes[label] = (f"127.0.0.1:{port}", route_proxy)

        topics: dict[str, str] = {}
        for label, (bootstrap, _) in routes.items():
            if label == "tiered-mq proxied":
                topics[label] = topics["tiered-mq"]  # the same broker and log
                continue
            topics[label] = create_topic(bootstrap)
            rate = produce(bootstrap, topics[label], args.messages)
            print(f"{label:21s} produced {args.messages:,} at {rate:,.0f} msg/s")

        trials = [(label, 0.0) for label, (_, p) in routes.items() if p is None]
        trials += [(label, cap) for label, (_, p) in routes.items() if p for cap in caps]
        best: dict[tuple[str, float], tuple[float, int]] = {}
        for rnd in range(args.rounds):
            for label, cap in trials:
                bootstrap, route_proxy = routes[label]
                if route_proxy is not None:
                    route_proxy.rate = cap * 1e6
                rate, pauses = consume(bootstrap, topics[label], args.messages, {})
                if rate > best.get((label, cap), (0.0, 0))[0]:
                    best[(label, cap)] = (rate, pauses)
                line = f"{describe(label, cap)} {rate:12,.0f} msg/s  pauses {pauses}"
                print(f"round {rnd + 1} {line}")
        tuned = {
            label: consume(bootstrap, topics[label], args.messages, TUNED)[0]
            for label, (bootstrap, p) in routes.items()
            if p is None
        }

        print(f"\nbest of {args.rounds}, default consumer, {args.messages:,} x 100 B from offset 0")
        for label, cap in trials:
            rate, pauses = best[(label, cap)]
            base = best[(label.split(" ")[0], 0.0)][0]
            print(
                f"  {describe(label, cap)} {rate:12,.0f} msg/s  pauses {pauses}"
                f"  ({rate / base:.2f}x the same broker, direct)"
            )
        for label, rate in tuned.items():
            print(f"  {label:21s} tuned consumer (fetch.queue.backoff.ms=5) {rate:12,.0f} msg/s")
    finally:
        for process in processes:
            process.stop()


def describe(label: str, cap: float) -> str:
    if "proxied" not in label:
        return f"{label:21s} direct       "
    return f"{label:21s} {f'cap {cap:.0f} MB/s' if cap else 'no cap':13s}"


if __name__ == "__main__":
    main()
