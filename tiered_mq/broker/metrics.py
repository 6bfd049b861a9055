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
    tiered_mq_partition_log_end_offset{topic,partition}      }  read at scrape time from the
    tiered_mq_partition_high_watermark{topic,partition}      }  partitions (no hot-path cost)
    tiered_mq_partition_log_start_offset{topic,partition}    }
    tiered_mq_partition_size_bytes{topic,partition}          }
    tiered_mq_consumer_group_offset{group,topic,partition}   }  read at scrape time from the
    tiered_mq_consumer_group_lag{group,topic,partition}      }  group coordinator: lag is the
    tiered_mq_consumer_group_members{group}                  }  high watermark minus the
                                                                committed offset, at least 0
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class PartitionCollector(Collector):
    """Per-partition offsets and sizes, read when Prometheus scrapes (from the HTTP thread:
    the values are plain ints, a scrape may see one partition a request behind another)."""

    def __init__(self, partitions: Callable[[], dict[Any, Any]]) -> None:
        self._partitions = partitions

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["topic", "partition"]
        families = {
            "log_end_offset": GaugeMetricFamily(
                "tiered_mq_partition_log_end_offset", "Log end offset", labels=labels
            ),
            "high_watermark": GaugeMetricFamily(
                "tiered_mq_partition_high_watermark", "High watermark", labels=labels
            ),
            "log_start_offset": GaugeMetricFamily(
                "tiered_mq_partition_log_start_offset", "Log start offset", labels=labels
            ),
            "size_bytes": GaugeMetricFamily(
                "tiered_mq_partition_size_bytes", "Bytes on local disk", labels=labels
            ),
        }
        for tp, partition in list(self._partitions().items()):
            values = [tp.topic, str(tp.partition)]
            try:
                families["log_end_offset"].add_metric(values, partition.log_end_offset)
                families["high_watermark"].add_metric(values, partition.high_watermark)
                families["log_start_offset"].add_metric(values, partition.log_start_offset)
                families["size_bytes"].add_metric(values, partition.log.size_bytes())
            except Exception:  # a partition closing under the scrape: skip it
                continue
        yield from families.values()


class ConsumerGroups(Protocol):
    """What the group coordinator offers the metrics endpoint (snapshots, safe from its thread)."""

    def committed_offsets(self) -> list[tuple[str, Any, int]]:
        """(group, TopicPartition, committed offset) of every group."""
        ...

    def member_counts(self) -> list[tuple[str, int]]:
        """(group, number of members) of every group."""
        ...


class ConsumerGroupCollector(Collector):
    """Committed offset and lag of every (group, partition) with a committed offset, and each
    group's member count, read when Prometheus scrapes.

    ``partitions()`` maps TopicPartition -> Partition. Lag is the partition's high watermark
    minus the committed offset, floored at 0 (a commit may run ahead of a truncated log); a
    partition this broker does not hold (its topic deleted) gets an offset but no lag.
    """

    def __init__(self, groups: ConsumerGroups, partitions: Callable[[], dict[Any, Any]]) -> None:
        self._groups = groups
        self._partitions = partitions

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["group", "topic", "partition"]
        offset = GaugeMetricFamily(
            "tiered_mq_consumer_group_offset", "Committed offset", labels=labels
        )
        lag = GaugeMetricFamily(
            "tiered_mq_consumer_group_lag", "High watermark minus committed offset", labels=labels
        )
        members = GaugeMetricFamily(
            "tiered_mq_consumer_group_members", "Members of the group", labels=["group"]
        )
        partitions = self._partitions()
        for group, tp, committed in self._groups.committed_offsets():
            values = [group, tp.topic, str(tp.partition)]
            offset.add_metric(values, committed)
            partition = partitions.get(tp)
            if partition is not None:
                lag.add_metric(values, max(0, partition.high_watermark - committed))
        for group, count in self._groups.member_counts():
            members.add_metric([group], count)
        yield from (offset, lag, members)


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

    def watch_partitions(self, partitions: Callable[[], dict[Any, Any]]) -> None:
        """Export per-partition gauges of ``partitions()`` (TopicPartition -> Partition)."""
        self.registry.register(PartitionCollector(partitions))

    def watch_consumer_groups(
        self, groups: ConsumerGroups, partitions: Callable[[], dict[Any, Any]]
    ) -> None:
        """Export consumer group offsets, lag and members (see :class:`ConsumerGroupCollector`)."""
        self.registry.register(ConsumerGroupCollector(groups, partitions))

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
