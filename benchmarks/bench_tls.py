"""What TLS costs: W1 (1,000,000 100-byte values) through an SSL listener against the same
broker's plaintext listener.

One broker, two listeners (PLAINTEXT and SSL, a trustme test CA; TLS 1.3 with the default
ciphers). Per run and listener: produce with confluent-kafka (linger.ms=5, batch.size=1 MiB,
acks=all) to a fresh 1-partition topic, then read it all from offset 0 with the tuned consumer
of bench_broker.py (fetch.queue.backoff.ms=5, so librdkafka's 1 s queue pause does not hide the
difference). Runs alternate the listeners; the best of ``--runs`` is reported with the ratio
TLS / plaintext: plaintext (sendfile, no encryption) is the limit TLS is measured against.

Run: ``python benchmarks/bench_tls.py [--messages N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import ssl
import tempfile
from pathlib import Path
from typing import Any

import trustme
from _peers import BrokerProcess, peak_rss_mb
from bench_broker import TUNED, consume, create_topic, produce

from tests.integration.broker_process import free_port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-tls-"))
    ca = trustme.CA()
    keystore, cafile = work / "broker.pem", work / "ca.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(keystore))
    ca.cert_pem.write_to_path(str(cafile))
    plain, tls_port = free_port(), free_port()
    broker = BrokerProcess(
        work / "data",
        port=plain,
        extra_args=[
            "--log-level", "WARNING",
            "--config", f"listeners=PLAINTEXT://127.0.0.1:{plain},SSL://127.0.0.1:{tls_port}",
            "--config", f"ssl.keystore.location={keystore}",
        ],
    ).start()  # fmt: skip
    listeners: dict[str, tuple[str, dict[str, Any]]] = {
        "plaintext": (f"127.0.0.1:{plain}", {}),
        "tls": (
            f"127.0.0.1:{tls_port}",
            {"security.protocol": "SSL", "ssl.ca.location": str(cafile)},
        ),
    }
    try:
        best = {name: [0.0, 0.0] for name in listeners}
        for run in range(args.runs):
            for name, (bootstrap, conf) in listeners.items():
                topic = create_topic(broker.bootstrap)
                p = produce(bootstrap, topic, args.messages, conf)
                c = consume(bootstrap, topic, args.messages, {**TUNED, **conf})
                best[name] = [max(best[name][0], p), max(best[name][1], c)]
                print(f"run {run + 1} {name:9s} produce {p:12,.0f} msg/s  consume {c:12,.0f} msg/s")
        print(f"\nbest of {args.runs}, {args.messages:,} x 100 B, 1 partition, acks=all")
        for name, (p, c) in best.items():
            print(f"  {name:9s} produce {p:12,.0f} msg/s  consume {c:12,.0f} msg/s")
        (pp, pc), (tp, tc) = best["plaintext"], best["tls"]
        print(f"  ratio tls / plaintext: produce {tp / pp:.2f}x  consume {tc / pc:.2f}x")
        assert broker.proc is not None
        print(f"  broker peak RSS: {peak_rss_mb(broker.proc.pid):.0f} MB")
        print(f"  TLS: {ssl.OPENSSL_VERSION}")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
