"""Broker metrics (Prometheus): requests by API, error codes, bytes in/out, latency, state.

Each Broker owns a ``CollectorRegistry`` (several brokers may share one test process), served
over HTTP by ``start_http_server`` when ``--metrics-port`` is not 0. Names (Kafka's JMX
equivalent after ``#``)::

    tiered_mq_requests_total{api}                 requests handled, by API   # RequestsPerSec
    tiered_mq_request_errors_total{api}           requests whose handling raised (the
                                                  connection is closed, no response)
    tiered_mq_response_errors_total{api,error}    error codes in responses   # ErrorsPerSec
    tiered_mq_bytes_in_total                      record bytes appended by Produce
    tiered_mq_bytes_out_total                     record bytes sent by Fetch responses
    tiered_mq_messages_in_total                   records appended (from batch headers)
    tiered_mq_topic_bytes_in_total{topic}         }  the same per topic (BrokerTopicMetrics
    tiered_mq_topic_messages_in_total{topic}      }  BytesInPerSec, MessagesInPerSec,
    tiered_mq_topic_bytes_out_total{topic}        }  BytesOutPerSec,topic=...)
    tiered_mq_request_latency_seconds{api}        histogram: from the request's frame read
                                                  to its response taken by the socket
                                                  (a Fetch's long poll in) # TotalTimeMs
    tiered_mq_request_queue_time_seconds{api}     of which queued behind the connection's
                                                  earlier requests     # RequestQueueTimeMs
    tiered_mq_response_send_time_seconds{api}     of which the response's send (0: none,
                                                  acks=0 Produce)      # ResponseSendTimeMs
    tiered_mq_connections                         open client connections
    tiered_mq_partitions                          partitions hosted          # PartitionCount
    tiered_mq_leader_partitions                   of which this broker leads # LeaderCount
    tiered_mq_under_replicated_partitions         ISR smaller than replicas  # UnderReplicated
    tiered_mq_under_min_isr_partitions            ISR < effectiveMinIsr      # UnderMinIsr...
    tiered_mq_offline_partitions                  in the metadata, unserved  # OfflinePartitions
    tiered_mq_global_topics                       topics in the metadata     # GlobalTopicCount
    tiered_mq_global_partitions                   their partitions           # GlobalPartition..
    tiered_mq_partition_log_end_offset{topic,partition}      }  read at scrape time from the
    tiered_mq_partition_high_watermark{topic,partition}      }  partitions (no hot-path cost)
    tiered_mq_partition_log_start_offset{topic,partition}    }
    tiered_mq_partition_size_bytes{topic,partition}          }
    tiered_mq_consumer_group_offset{group,topic,partition}   }  read at scrape time from the
    tiered_mq_consumer_group_lag{group,topic,partition}      }  group coordinator: lag is the
    tiered_mq_consumer_group_members{group}                  }  high watermark minus the
                                                                committed offset, at least 0

``tiered_mq_response_errors_total`` counts what Kafka's ``AbstractResponse.errorCounts()``
counts (protocol/error_counts.py): every error code of every response sent, one per partition
(or topic, group, resource) and the top-level one, NONE included; and the codes of an acks=0
Produce that failed (its connection closed, as Kafka's ``closeConnection`` counts them). A
request whose handling raised has no response: it counts in ``tiered_mq_request_errors_total``
only. ``error`` is Kafka's error name (``UNKNOWN_TOPIC_OR_PARTITION``); a code this broker
does not know counts as ``UNKNOWN_SERVER_ERROR``, as Kafka's ``Errors.forCode``.

The three request-time histograms count each request the connection handled (not the
ApiVersions answer to an unknown version, nor a bare SASL token), once, when its response has
been sent or the request ended without one (a handler that failed: up to its failure); Kafka's
LocalTimeMs and RemoteTimeMs (a delayed Fetch) are the total minus the queue and send times:
the handler's time. The clock is ``time.monotonic``, read once per read from the socket (all
the frames it completed share it), once when a request's handling starts, before its send and
after it.

Hot path: a response's codes go to a plain dict per API, per-topic bytes to a small object per
topic, and the request, error and byte counters and the time histograms are plain numbers
(:class:`PlainCounter`, :class:`PlainHistogram`), all exported at scrape time; nothing is
formatted or locked per request (prometheus_client's Counter and Histogram take a mutex per
``inc``/``observe``: 2-3 us each, four of them per Produce). The per-topic
series of a topic go when it is deleted (``forget_topic``; a scrape also drops any topic the
broker no longer hosts), as Kafka removes its BrokerTopicMetrics; the partition and group
series are read from the live partitions and groups, so they go with them.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Gauge, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from tiered_mq.errors import for_code
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BUCKET_LABELS = (*(repr(bound) for bound in _BUCKETS), "+Inf")  # "le", as prometheus_client


class PlainCounter:
    """A counter bumped on the event loop: a plain number (``inc`` takes no lock; the HTTP
    thread reads ``value`` when Prometheus scrapes), exported by :class:`RequestCollector`
    as prometheus_client exports a Counter (``_total`` and ``_created``)."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value: float = 0
        self.created = time.time()

    def inc(self, amount: float = 1) -> None:
        self.value += amount


class PlainHistogram:
    """A latency histogram bumped on the event loop: ``counts[i]`` observations fell in bucket
    ``i`` (at most ``_BUCKETS[i]`` and above the bound before it; the last one: above every
    bound), ``sum`` is their total. Exported cumulative, as prometheus_client's Histogram."""

    __slots__ = ("counts", "created", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(_BUCKETS) + 1)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.counts[bisect_left(_BUCKETS, amount)] += 1  # the first bound >= amount
        self.sum += amount


class ApiMetrics:
    """What one API's requests are counted in: ``requests`` handled, ``errors`` (handling
    raised), the request-time histograms (``total_time``, ``queue_time``, ``send_time``) and
    ``codes`` (error code -> times a response carried it; add with
    ``protocol.error_counts.error_counter``)."""

    __slots__ = ("codes", "errors", "queue_time", "requests", "send_time", "total_time")

    def __init__(self, codes: dict[int, int]) -> None:
        self.requests = PlainCounter()
        self.errors = PlainCounter()
        self.total_time = PlainHistogram()
        self.queue_time = PlainHistogram()
        self.send_time = PlainHistogram()
        self.codes = codes

    def timed(self, received: float, dequeued: float, sending: float, done: float) -> None:
        """One request's times (``time.monotonic``): its frame read, its handling started, its
        response's send started (``done`` if none) and done."""
        # PlainHistogram.observe written out: 0.1 us less a request than three calls of it
        seconds = done - received
        histogram = self.total_time
        histogram.counts[bisect_left(_BUCKETS, seconds)] += 1
        histogram.sum += seconds
        seconds = dequeued - received
        histogram = self.queue_time
        histogram.counts[bisect_left(_BUCKETS, seconds)] += 1
        histogram.sum += seconds
        seconds = done - sending
        histogram = self.send_time
        histogram.counts[bisect_left(_BUCKETS, seconds)] += 1
        histogram.sum += seconds


def _created_last(family: Any) -> Any:
    """``family`` with its ``_created`` samples after the others, in the order
    prometheus_client's own Counter and Histogram print them."""
    family.samples.sort(key=lambda sample: sample.name.endswith("_created"))
    return family


_TIME_HISTOGRAMS = (
    ("tiered_mq_request_latency_seconds", "Request time, frame read to response sent", "total"),
    ("tiered_mq_request_queue_time_seconds", "Time a request waited to be handled", "queue"),
    ("tiered_mq_response_send_time_seconds", "Time a response took to send", "send"),
)


def _histogram(name: str, doc: str, per_api: dict[str, PlainHistogram]) -> Any:
    family = HistogramMetricFamily(name, doc, labels=["api"])
    for api, histogram in per_api.items():
        counts = list(histogram.counts)
        cumulative, buckets = 0, []
        for le, n in zip(_BUCKET_LABELS, counts, strict=True):
            cumulative += n
            buckets.append((le, float(cumulative)))
        family.add_metric([api], buckets, histogram.sum)
        family.samples.append(Sample(f"{name}_created", {"api": api}, histogram.created))
    return family


class RequestCollector(Collector):
    """``tiered_mq_requests_total{api}``, ``tiered_mq_request_errors_total{api}``, the
    byte and message counters and the request-time histograms by API, from the plain
    counters the event loop bumps."""

    def __init__(self, metrics: BrokerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Any]:
        m = self._metrics
        per_api = _copy(m.per_api)
        for name, doc, errors in (
            ("tiered_mq_requests", "Requests handled", False),
            ("tiered_mq_request_errors", "Requests that failed", True),
        ):
            family = CounterMetricFamily(name, doc, labels=["api"])
            for api, children in per_api.items():
                counter = children.errors if errors else children.requests
                family.add_metric([api], counter.value, created=counter.created)
            yield _created_last(family)
        for name, doc, counter in (
            ("tiered_mq_bytes_in", "Record bytes appended", m.bytes_in),
            ("tiered_mq_bytes_out", "Record bytes fetched", m.bytes_out),
            ("tiered_mq_messages_in", "Records appended", m.messages_in),
        ):
            yield CounterMetricFamily(name, doc, value=counter.value, created=counter.created)
        for name, doc, which in _TIME_HISTOGRAMS:
            histograms = {api: getattr(c, f"{which}_time") for api, c in per_api.items()}
            yield _histogram(name, doc, histograms)


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


def error_name(code: int) -> str:
    """Kafka's name of an error code: NONE for 0, UNKNOWN_SERVER_ERROR for an unknown one."""
    return "NONE" if code == 0 else for_code(code).message


def _copy(table: dict[Any, Any]) -> dict[Any, Any]:
    """A copy of a dict the event loop mutates, taken from the HTTP thread (retried if the
    dict changes size under the copy)."""
    for _ in range(10):
        try:
            return dict(table)
        except RuntimeError:
            continue
    return {}


class ResponseErrorCollector(Collector):
    """``tiered_mq_response_errors_total{api,error}`` from the per-API code counts."""

    def __init__(self, codes: dict[str, dict[int, int]]) -> None:
        self._codes = codes

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "tiered_mq_response_errors",
            "Error codes in responses, one per partition or resource (NONE included)",
            labels=["api", "error"],
        )
        for api, counts in sorted(_copy(self._codes).items()):
            by_name: dict[str, int] = {}
            for code, n in _copy(counts).items():
                name = error_name(code)
                by_name[name] = by_name.get(name, 0) + n
            for name, n in sorted(by_name.items()):
                family.add_metric([api, name], n)
        yield family


class TopicStats:
    """Per-topic traffic counters, bumped by Produce and Fetch on the event loop."""

    __slots__ = ("bytes_in", "bytes_out", "messages_in")

    def __init__(self) -> None:
        self.bytes_in = 0
        self.messages_in = 0
        self.bytes_out = 0


class TopicCollector(Collector):
    """``tiered_mq_topic_{bytes_in,messages_in,bytes_out}_total{topic}`` of the topics this
    broker hosts; the stats of a topic no longer hosted are dropped (deleted meanwhile)."""

    def __init__(
        self, stats: dict[str, TopicStats], partitions: Callable[[], dict[Any, Any]]
    ) -> None:
        self._stats = stats
        self._partitions = partitions

    def collect(self) -> Iterator[CounterMetricFamily]:
        labels = ["topic"]
        bytes_in = CounterMetricFamily(
            "tiered_mq_topic_bytes_in", "Record bytes appended by Produce", labels=labels
        )
        messages_in = CounterMetricFamily(
            "tiered_mq_topic_messages_in", "Records appended by Produce", labels=labels
        )
        bytes_out = CounterMetricFamily(
            "tiered_mq_topic_bytes_out", "Record bytes in Fetch responses", labels=labels
        )
        hosted = {tp.topic for tp in list(_copy(self._partitions()))}
        for topic, stats in sorted(_copy(self._stats).items()):
            if topic not in hosted:
                self._stats.pop(topic, None)
                continue
            bytes_in.add_metric([topic], stats.bytes_in)
            messages_in.add_metric([topic], stats.messages_in)
            bytes_out.add_metric([topic], stats.bytes_out)
        yield from (bytes_in, messages_in, bytes_out)


class Metadata(Protocol):
    """What the metadata store offers the metrics endpoint (in-memory reads)."""

    def list_topics(self) -> list[str]: ...

    def get_topic(self, name: str) -> Any: ...

    def partition_state(self, tp: Any) -> Any: ...


class ClusterCollector(Collector):
    """Partition counts read at scrape time, as Kafka's ReplicaManager and controller gauges.

    Of the partitions hosted (``partitions()``): how many (PartitionCount), led here
    (LeaderCount), with an ISR smaller than their replica set (UnderReplicatedPartitions),
    with fewer in-sync replicas than their ``min.insync.replicas``, capped at their replica count
    as Kafka 3.7+'s effectiveMinIsr (UnderMinIsrPartitionCount: acks=all produce is answered
    NOT_ENOUGH_REPLICAS). Of the metadata: topics and partitions
    (GlobalTopicCount, GlobalPartitionCount) and partitions this broker should serve but does
    not host (OfflinePartitionsCount: a log that failed to open; a topic being created shows
    for the moment its logs take to open). A scrape racing a metadata change skips the
    metadata gauges rather than report half a change."""

    def __init__(
        self, metadata: Metadata, partitions: Callable[[], dict[Any, Any]], node_id: int
    ) -> None:
        self._metadata = metadata
        self._partitions = partitions
        self._node_id = node_id

    def collect(self) -> Iterator[GaugeMetricFamily]:
        hosted = _copy(self._partitions())
        leaders = under_replicated = under_min_isr = 0
        for tp, partition in hosted.items():
            try:
                state = self._metadata.partition_state(tp)
                isr = partition.isr
                if state is None or state.leader == self._node_id:
                    leaders += 1
                if state is not None and len(state.isr) < len(state.replicas):
                    under_replicated += 1
                if len(isr) < partition.effective_min_isr():
                    under_min_isr += 1
            except Exception:  # a partition closing under the scrape: skip it
                continue
        yield GaugeMetricFamily("tiered_mq_partitions", "Partitions hosted", value=len(hosted))
        yield GaugeMetricFamily(
            "tiered_mq_leader_partitions", "Partitions this broker leads", value=leaders
        )
        yield GaugeMetricFamily(
            "tiered_mq_under_replicated_partitions",
            "Hosted partitions whose ISR is smaller than their replica set",
            value=under_replicated,
        )
        yield GaugeMetricFamily(
            "tiered_mq_under_min_isr_partitions",
            "Hosted partitions with fewer in-sync replicas than min.insync.replicas "
            "(at most their replica count)",
            value=under_min_isr,
        )
        try:
            topics = {name: self._metadata.get_topic(name) for name in self._metadata.list_topics()}
        except RuntimeError:  # the metadata changed under the scrape
            return
        total = offline = 0
        for name, meta in topics.items():
            if meta is None:
                continue
            total += meta.partitions
            for i in range(meta.partitions):
                tp = TopicPartition(name, i)
                if tp not in hosted:
                    state = self._metadata.partition_state(tp)
                    if state is None or state.leader in (self._node_id, -1):
                        offline += 1
        yield GaugeMetricFamily(
            "tiered_mq_global_topics", "Topics in the metadata", value=len(topics)
        )
        yield GaugeMetricFamily(
            "tiered_mq_global_partitions", "Partitions of the topics in the metadata", value=total
        )
        yield GaugeMetricFamily(
            "tiered_mq_offline_partitions",
            "Partitions in the metadata this broker does not serve",
            value=offline,
        )


class BrokerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.bytes_in = PlainCounter()
        self.bytes_out = PlainCounter()
        self.messages_in = PlainCounter()
        self.per_api: dict[str, ApiMetrics] = {}  # by API name, see for_api
        r.register(RequestCollector(self))
        self.connections = Gauge("tiered_mq_connections", "Open connections", registry=r)
        self._error_codes: dict[str, dict[int, int]] = {}  # api -> error code -> responses
        r.register(ResponseErrorCollector(self._error_codes))
        self.topics: dict[str, TopicStats] = {}
        self._server: object | None = None

    def watch_partitions(self, partitions: Callable[[], dict[Any, Any]]) -> None:
        """Export per-partition gauges of ``partitions()`` (TopicPartition -> Partition)."""
        self.registry.register(PartitionCollector(partitions))

    def watch_topics(
        self, partitions: Callable[[], dict[Any, Any]], metadata: Metadata, node_id: int
    ) -> None:
        """Export the per-topic counters of the topics hosted in ``partitions()`` and the
        partition counts of :class:`ClusterCollector`."""
        self.registry.register(TopicCollector(self.topics, partitions))
        self.registry.register(ClusterCollector(metadata, partitions, node_id))

    def topic(self, name: str) -> TopicStats:
        """The traffic counters of topic ``name`` (created at its first use)."""
        stats = self.topics.get(name)
        if stats is None:
            stats = self.topics[name] = TopicStats()
        return stats

    def forget_topic(self, name: str) -> None:
        """Drop a deleted topic's counters (a topic created later under the name starts at 0)."""
        self.topics.pop(name, None)

    def watch_consumer_groups(
        self, groups: ConsumerGroups, partitions: Callable[[], dict[Any, Any]]
    ) -> None:
        """Export consumer group offsets, lag and members (see :class:`ConsumerGroupCollector`)."""
        self.registry.register(ConsumerGroupCollector(groups, partitions))

    def for_api(self, api: str) -> ApiMetrics:
        """The counters and histograms of one API (``ApiMetrics``), cached."""
        children = self.per_api.get(api)
        if children is None:
            children = ApiMetrics(self._error_codes.setdefault(api, {}))
            self.per_api[api] = children
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
