"""Prometheus metrics of the cold tier, in the registry the caller gives (the broker's own;
several brokers may share a test process, so nothing goes to the global registry).

Per partition (labels topic, partition):
``tiered_mq_remote_copy_lag_bytes`` / ``_copy_lag_segments``: rolled local segments not yet in
the bucket (Kafka's RemoteCopyLagBytes / RemoteCopyLagSegments; grows visibly while the bucket
is unreachable; 0 while copying is off, ``remote.log.copy.disable=true``, as Kafka resets them);
``tiered_mq_remote_log_bytes`` / ``_log_segments``: what the manifest holds.
Totals: ``tiered_mq_remote_upload_bytes_total``, ``_upload_segments_total``,
``_upload_errors_total``, ``_fetch_requests_total`` (remote reads of records),
``_fetch_bytes_total`` (bytes served to readers), ``_fetch_errors_total``,
``_fetch_expired_total`` (fetches answered empty: the bucket outlasted remote.fetch.max.wait.ms),
``_list_offsets_expired_total`` (ListOffsets partitions answered REQUEST_TIMED_OUT: the bucket
outlasted remote.list.offsets.request.timeout.ms or the request's timeout_ms),
``_get_bytes_total`` (bytes fetched from the bucket), ``_delete_segments_total``,
``_delete_errors_total``, ``_cache_hits_total``, ``_cache_misses_total``, ``_cache_bytes``.

Kafka's KIP-405 names: RemoteCopyBytesPerSec, RemoteCopyRequestsPerSec, RemoteCopyErrorsPerSec
are ``_upload_bytes_total``, ``_upload_segments_total``, ``_upload_errors_total``;
RemoteFetchBytesPerSec, RemoteFetchRequestsPerSec, RemoteFetchErrorsPerSec are
``_fetch_bytes_total``, ``_fetch_requests_total``, ``_fetch_errors_total``; RemoteLogSizeBytes
and RemoteLogMetadataCount are ``_log_bytes`` and ``_log_segments`` (per partition: sum by
topic); RemoteDeleteRequestsPerSec, RemoteDeleteErrorsPerSec are ``_delete_segments_total``,
``_delete_errors_total``.

Per topic (label topic), Kafka's BrokerTopicMetrics of KIP-405 for one topic: the same events
as the broker-wide totals, so summed over topics they give them::

    tiered_mq_topic_remote_fetch_bytes_total       RemoteFetchBytesPerSec
    tiered_mq_topic_remote_fetch_requests_total    RemoteFetchRequestsPerSec
    tiered_mq_topic_remote_fetch_errors_total      RemoteFetchErrorsPerSec
    tiered_mq_topic_remote_upload_bytes_total      RemoteCopyBytesPerSec
    tiered_mq_topic_remote_upload_segments_total   RemoteCopyRequestsPerSec (segments copied)
    tiered_mq_topic_remote_upload_errors_total     RemoteCopyErrorsPerSec (failed passes)
    tiered_mq_topic_remote_delete_segments_total   RemoteDeleteRequestsPerSec (segments deleted
                                                   by remote retention)
    tiered_mq_topic_remote_delete_errors_total     RemoteDeleteErrorsPerSec
    tiered_mq_topic_remote_log_bytes               RemoteLogSizeBytes    } the partitions'
    tiered_mq_topic_remote_log_segments            RemoteLogMetadataCount} _log_* summed

A topic has these series while this broker hosts one of its tiered partitions (``start``, from
``on_become_leader``, until ``forget`` of its last one, from ``on_stop``): a deleted topic's
go at once, as Kafka's ``BrokerTopicStats.removeMetrics``. An upload, read or deletion still in
flight when its topic went counts in the broker-wide totals only: ``topic`` gives it stats that
no series shows, so it cannot bring the topic's series back. The per-topic numbers are plain
ints bumped on the event loop and read by the scrape thread (``_TopicCollector``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector


class TopicRemoteStats:
    """One topic's remote-storage counters, and its partitions' remote log size and segment
    count (partition -> value; exported summed)."""

    __slots__ = (
        "delete_errors",
        "delete_segments",
        "fetch_bytes",
        "fetch_errors",
        "fetch_requests",
        "log_bytes",
        "log_segments",
        "upload_bytes",
        "upload_errors",
        "upload_segments",
    )

    def __init__(self) -> None:
        self.fetch_bytes = self.fetch_requests = self.fetch_errors = 0
        self.upload_bytes = self.upload_segments = self.upload_errors = 0
        self.delete_segments = self.delete_errors = 0
        self.log_bytes: dict[int, int] = {}
        self.log_segments: dict[int, int] = {}


_TOPIC_COUNTERS = (
    ("fetch_bytes", "Bytes served from the bucket"),
    ("fetch_requests", "Remote reads of records for Fetch"),
    ("fetch_errors", "Failed remote reads"),
    ("upload_bytes", "Bytes uploaded"),
    ("upload_segments", "Segments uploaded"),
    ("upload_errors", "Failed upload attempts"),
    ("delete_segments", "Segments deleted"),
    ("delete_errors", "Failed deletions"),
)


def _copy(table: dict[Any, Any]) -> dict[Any, Any]:
    """A copy of a dict the event loop mutates, taken from the scrape thread."""
    for _ in range(10):
        try:
            return dict(table)
        except RuntimeError:  # changed size under the copy
            continue
    return {}


class _TopicCollector(Collector):
    """The ``tiered_mq_topic_remote_*`` series of the topics in ``topics``."""

    def __init__(self, topics: dict[str, TopicRemoteStats]) -> None:
        self._topics = topics

    def collect(self) -> Iterator[Any]:
        topics = sorted(_copy(self._topics).items())
        for name, doc in _TOPIC_COUNTERS:
            family = CounterMetricFamily(f"tiered_mq_topic_remote_{name}", doc, labels=["topic"])
            for topic, stats in topics:
                family.add_metric([topic], getattr(stats, name))
            yield family
        for name, doc in (
            ("log_bytes", "Bytes of the topic in the bucket"),
            ("log_segments", "Segments of the topic in the bucket"),
        ):
            gauge = GaugeMetricFamily(f"tiered_mq_topic_remote_{name}", doc, labels=["topic"])
            for topic, stats in topics:
                gauge.add_metric([topic], sum(_copy(getattr(stats, name)).values()))
            yield gauge


class RemoteMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = r = registry if registry is not None else CollectorRegistry()
        labels = ["topic", "partition"]
        p = "tiered_mq_remote_"
        self.copy_lag_bytes = Gauge(
            p + "copy_lag_bytes", "Bytes not yet uploaded", labels, registry=r
        )
        self.copy_lag_segments = Gauge(
            p + "copy_lag_segments", "Segments not yet uploaded", labels, registry=r
        )
        self.log_bytes = Gauge(p + "log_bytes", "Bytes in the bucket", labels, registry=r)
        self.log_segments = Gauge(p + "log_segments", "Segments in the bucket", labels, registry=r)
        self.upload_bytes = Counter(p + "upload_bytes", "Bytes uploaded", registry=r)
        self.upload_segments = Counter(p + "upload_segments", "Segments uploaded", registry=r)
        self.upload_errors = Counter(p + "upload_errors", "Failed upload attempts", registry=r)
        self.fetch_bytes = Counter(p + "fetch_bytes", "Bytes served from the bucket", registry=r)
        self.fetch_requests = Counter(
            p + "fetch_requests", "Remote reads of records for Fetch", registry=r
        )
        self.fetch_errors = Counter(p + "fetch_errors", "Failed remote reads", registry=r)
        self.fetch_expired = Counter(
            p + "fetch_expired",
            "Fetches answered without records: the remote read outlasted remote.fetch.max.wait.ms",
            registry=r,
        )
        self.list_offsets_expired = Counter(
            p + "list_offsets_expired",
            "ListOffsets partitions answered REQUEST_TIMED_OUT: the remote lookup outlasted "
            "remote.list.offsets.request.timeout.ms",
            registry=r,
        )
        self.get_bytes = Counter(p + "get_bytes", "Bytes fetched from the bucket", registry=r)
        self.delete_segments = Counter(p + "delete_segments", "Segments deleted", registry=r)
        self.delete_errors = Counter(p + "delete_errors", "Failed deletions", registry=r)
        self.cache_hits = Counter(p + "cache_hits", "Chunk cache hits", registry=r)
        self.cache_misses = Counter(p + "cache_misses", "Chunk cache misses", registry=r)
        self.cache_bytes = Gauge(p + "cache_bytes", "Bytes in the chunk cache", registry=r)
        self._live: dict[str, set[int]] = {}  # topic -> its partitions started, not forgotten
        self.topics: dict[str, TopicRemoteStats] = {}  # of topics in _live, at first use
        r.register(_TopicCollector(self.topics))

    def start(self, topic: str, partition: int) -> None:
        """``topic``'s partition is hosted here (its per-topic series may exist)."""
        self._live.setdefault(topic, set()).add(partition)

    def topic(self, name: str) -> TopicRemoteStats:
        """The per-topic stats to count ``name``'s remote work in: exported while the topic has
        a started partition; otherwise (its last partition forgotten, work still in flight)
        stats no series shows."""
        stats = self.topics.get(name)
        if stats is None:
            stats = TopicRemoteStats()
            if name in self._live:
                self.topics[name] = stats
        return stats

    def set_log_size(self, topic: str, partition: int, size_bytes: int, segments: int) -> None:
        """A partition's remote log size and segment count (its manifest's), per partition
        and in its topic's sums."""
        labels = (topic, str(partition))
        self.log_bytes.labels(*labels).set(size_bytes)
        self.log_segments.labels(*labels).set(segments)
        stats = self.topic(topic)
        stats.log_bytes[partition] = size_bytes
        stats.log_segments[partition] = segments

    def forget(self, topic: str, partition: int) -> None:
        """Drop a partition's labelled series (leadership moved away or topic deleted), and
        its topic's when it was the topic's last partition here."""
        live = self._live.get(topic)
        if live is not None:
            live.discard(partition)
            if not live:
                del self._live[topic]
        if topic in self._live:
            stats = self.topics.get(topic)
            if stats is not None:
                stats.log_bytes.pop(partition, None)
                stats.log_segments.pop(partition, None)
        else:
            self.topics.pop(topic, None)
        for gauge in (
            self.copy_lag_bytes,
            self.copy_lag_segments,
            self.log_bytes,
            self.log_segments,
        ):
            try:
                gauge.remove(topic, str(partition))
            except KeyError:
                pass
