"""The SDK consumer (``tiered_mq.client.Consumer``) against raw confluent-kafka, same broker.

Starts a `tiered-mq dev` broker, produces ``--messages`` 100-byte values to a 1-partition topic
(bench_broker's W1 producer), then reads them all from offset 0, interleaved over ``--runs``:

  raw default:     confluent-kafka ``Consumer.consume(10000)``, librdkafka's settings (the
                   reference: the client's own pace, with librdkafka's 1 s queue backoff)
  raw tuned:       the same with ``fetch.queue.backoff.ms=20``
  sdk:             the SDK consumer with its defaults (``fetch_queue_backoff_ms=20``), which
                   also turns every message into a ``ConsumedRecord``
  sdk 1 s backoff: the SDK consumer with librdkafka's 1,000 ms backoff

and prints each one's best msg/s and the ratios sdk / raw (what the SDK's per-record work
costs) and sdk / sdk-1s-backoff (what its backoff default gains).

    python benchmarks/bench_sdk_consume.py [--messages 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _peers import ours
from bench_broker import VALUE, consume, create_topic, produce

from tiered_mq.client import Consumer, ConsumerConfig
from tiered_mq.client.consumer import OFFSET_BEGINNING
from tiered_mq.topic_partition import TopicPartition

BATCH = 10_000


def raw_rate(bootstrap: str, topic: str, n: int, backoff_ms: int | None) -> float:
    """W1's confluent-kafka consumer (bench_broker.consume), with the same queue backoff."""
    extra = {} if backoff_ms is None else {"fetch.queue.backoff.ms": backoff_ms}
    return consume(bootstrap, topic, n, extra)


def sdk_rate(bootstrap: str, topic: str, n: int, backoff_ms: int | None) -> float:
    config = ConsumerConfig(bootstrap_servers=bootstrap)
    if backoff_ms is not None:
        config = ConsumerConfig(bootstrap_servers=bootstrap, fetch_queue_backoff_ms=backoff_ms)
    with Consumer(config) as consumer:
        consumer.assign({TopicPartition(topic, 0): OFFSET_BEGINNING})
        got, started = 0, time.perf_counter()
        while got < n:
            got += len(consumer.consume(BATCH, 1.0))
        return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    cases: dict[str, tuple[Callable[[str, str, int, int | None], float], int | None]] = {
        "raw default": (raw_rate, None),
        "raw tuned": (raw_rate, 20),
        "sdk": (sdk_rate, None),
        "sdk 1 s backoff": (sdk_rate, 1000),
    }
    broker = ours(Path(tempfile.mkdtemp(prefix="bench-sdk-")) / "broker", "--log-level", "WARNING")
    try:
        topic = create_topic(broker.bootstrap)
        produce(broker.bootstrap, topic, args.messages)
        best = dict.fromkeys(cases, 0.0)
        for run in range(args.runs):
            for name, (rate, backoff) in cases.items():
                r = rate(broker.bootstrap, topic, args.messages, backoff)
                best[name] = max(best[name], r)
                print(f"run {run + 1} {name:16s} {r:12,.0f} msg/s", flush=True)
        print(f"\nbest of {args.runs}, {args.messages:,} x {len(VALUE)} B from offset 0")
        for name, r in best.items():
            print(f"  {name:16s} {r:12,.0f} msg/s")
        print(
            f"  sdk / raw default {best['sdk'] / best['raw default']:.2f}x"
            f"  sdk / raw tuned {best['sdk'] / best['raw tuned']:.2f}x"
            f"  sdk / sdk 1 s backoff {best['sdk'] / best['sdk 1 s backoff']:.2f}x"
        )
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
