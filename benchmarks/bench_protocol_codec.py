"""Request decode / response encode throughput of tiered_mq.protocol, single core, vs a peer.

The peer is kafka-python 3's protocol codec: also pure Python, also driven by Kafka's JSON
message specs, and also compiled per version (it generates Python source per message), so it
is the natural reference for a Python broker's hot path. Messages:

- Produce v7 request decode: 1 topic x ``--partitions`` partitions, 16 KiB records each
- Fetch v11 request decode: ``--partitions`` partitions (a consumer's fetch)
- Fetch v11 response encode: ``--partitions`` partitions, 1 KiB records each
- Metadata v8 response encode: 100 topics x 10 partitions, 3 replicas

Prints the best messages/s of repeated runs for each side and the ratio ours / peer. Usage::

    python benchmarks/bench_protocol_codec.py [--partitions 20] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.producer import ProduceRequest

from tiered_mq.protocol import codec
from tiered_mq.protocol.header import RequestHeader, decode_request_header


def _rate(fn: Callable[[], Any], seconds: float) -> float:
    best = 0.0
    for _ in range(3):
        n, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(20):
                fn()
            n += 20
        best = max(best, n / elapsed)
    return best


def _request(api_key: int, version: int, body: dict[str, Any]) -> tuple[RequestHeader, bytes]:
    frame = codec.encode_request(api_key, version, 1, "bench", body)
    header, offset = decode_request_header(memoryview(frame)[4:])
    return header, frame[4 + offset :]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=0.5)
    args = ap.parse_args()
    n = args.partitions
    rows: list[tuple[str, float, float]] = []

    produce = {
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [
            {
                "name": "bench",
                "partition_data": [{"index": i, "records": b"r" * 16384} for i in range(n)],
            }
        ],
    }
    header, body = _request(0, 7, produce)
    view = memoryview(body)
    rows.append(
        (
            f"Produce v7 request decode ({n} partitions)",
            _rate(lambda: codec.decode_request(header, view), args.seconds),
            _rate(lambda: ProduceRequest.decode(body, version=7), args.seconds),
        )
    )

    fetch = {
        "max_wait_ms": 500,
        "min_bytes": 1,
        "topics": [
            {
                "topic": "bench",
                "partitions": [
                    {"partition": i, "fetch_offset": 1000 * i, "partition_max_bytes": 1 << 20}
                    for i in range(n)
                ],
            }
        ],
    }
    header, body = _request(1, 11, fetch)
    view = memoryview(body)
    rows.append(
        (
            f"Fetch v11 request decode ({n} partitions)",
            _rate(lambda: codec.decode_request(header, view), args.seconds),
            _rate(lambda: FetchRequest.decode(body, version=11), args.seconds),
        )
    )

    fetch_resp = {
        "responses": [
            {
                "topic": "bench",
                "partitions": [
                    {"partition_index": i, "high_watermark": 10**6, "records": b"b" * 1024}
                    for i in range(n)
                ],
            }
        ]
    }
    rh = RequestHeader(1, 11, 1, None)
    raw = b"".join(bytes(c) for c in codec.encode_response(rh, fetch_resp))
    kp_fetch = FetchResponse.decode(raw[8:], version=11)
    kp_fetch._header = None
    rows.append(
        (
            f"Fetch v11 response encode ({n} partitions)",
            _rate(lambda: codec.encode_response(rh, fetch_resp), args.seconds),
            _rate(lambda: kp_fetch.encode(version=11), args.seconds),
        )
    )

    metadata = {
        "brokers": [{"node_id": b, "host": f"broker-{b}", "port": 9092} for b in range(3)],
        "cluster_id": "bench",
        "controller_id": 0,
        "topics": [
            {
                "name": f"topic-{t}",
                "partitions": [
                    {
                        "partition_index": p,
                        "leader_id": p % 3,
                        "replica_nodes": [0, 1, 2],
                        "isr_nodes": [0, 1, 2],
                    }
                    for p in range(10)
                ],
            }
            for t in range(100)
        ],
    }
    rh = RequestHeader(3, 8, 1, None)
    raw = b"".join(bytes(c) for c in codec.encode_response(rh, metadata))
    kp_meta = MetadataResponse.decode(raw[8:], version=8)
    kp_meta._header = None
    rows.append(
        (
            "Metadata v8 response encode (100 topics x 10 partitions)",
            _rate(lambda: codec.encode_response(rh, metadata), args.seconds),
            _rate(lambda: kp_meta.encode(version=8), args.seconds),
        )
    )

    print(f"{'message':58} {'ours/s':>12} {'kafka-python/s':>15} {'ratio':>7}")
    for name, ours, peer in rows:
        print(f"{name:58} {ours:12,.0f} {peer:15,.0f} {ours / peer:7.2f}")


if __name__ == "__main__":
    main()
