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
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


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

    def forget(self, topic: str, partition: int) -> None:
        """Drop a partition's labelled series (leadership moved away or topic deleted)."""
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
