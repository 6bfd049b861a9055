"""Broker metrics (Prometheus): requests by API, bytes in/out, produce and fetch latency.

Each Broker owns a ``CollectorRegistry`` (several brokers may share one test process), served
over HTTP by ``start_http_server`` when ``--metrics-port`` is not 0. Names::

    tiered_mq_requests_total{api}                 requests handled, by API name
    tiered_mq_request_errors_total{api}           requests that raised (connection closed)
    tiered_mq_bytes_in_total                      record bytes appended by Produce
    tiered_mq_bytes_out_total                     record bytes returned by Fetch
    tiered_mq_messages_in_total                   records appended (from batch headers)
    tiered_mq_request_latency_seconds{api}        handling time, histogram
    tiered_mq_connections                         open client connections
"""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

log = logging.getLogger(__name__)

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class BrokerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("tiered_mq_requests", "Requests handled", ["api"], registry=r)
        self.request_errors = Counter(
            "tiered_mq_request_errors", "Requests that failed", ["api"], registry=r
        )
        self.bytes_in = Counter("tiered_mq_bytes_in", "Record bytes appended", registry=r)
        self.bytes_out = Counter("tiered_mq_bytes_out", "Record bytes fetched", registry=r)
        self.messages_in = Counter("tiered_mq_messages_in", "Records appended", registry=r)
        self.latency = Histogram(
            "tiered_mq_request_latency_seconds",
            "Request handling time",
            ["api"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.connections = Gauge("tiered_mq_connections", "Open connections", registry=r)
        self._per_api: dict[str, tuple[Any, Any, Any]] = {}
        self._server: object | None = None

    def for_api(self, api: str) -> tuple[Any, Any, Any]:
        """(requests counter, errors counter, latency histogram) of one API, cached."""
        children = self._per_api.get(api)
        if children is None:
            children = (
                self.requests.labels(api),
                self.request_errors.labels(api),
                self.latency.labels(api),
            )
            self._per_api[api] = children
        return children

    def serve(self, host: str, port: int) -> int | None:
        """Start the HTTP endpoint; returns its port, None if off (port 0) or the port is taken."""
        if port <= 0:
            return None
        try:
            server, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as e:
            log.warning("metrics endpoint on %s:%d not started: %s", host, port, e)
            return None
        self._server = server
        return int(server.server_port)

    def close(self) -> None:
        server = self._server
        if server is not None:
            server.shutdown()  # type: ignore[attr-defined]
            server.server_close()  # type: ignore[attr-defined]
            self._server = None
