"""LogCleaner: the broker's background task compacting ``cleanup.policy=compact`` logs.

Every ``log.cleaner.backoff.ms`` the task looks at the hosted partitions whose topic config
contains ``compact`` (``compact,delete`` too; tiered topics are skipped: Kafka forbids compaction
with remote storage) and cleans, filthiest first, each log whose dirty ratio is above
``min.cleanable.dirty.ratio``, or whose oldest dirty segment is past ``max.compaction.lag.ms``,
or which holds a tombstone past its delete horizon (see cleaner.py and segment_rewrite.py for
the sections, passes and file protocol).

A pass that meets data it cannot read (a corrupt batch, a payload above
``message.max.decompressed.bytes``: CorruptRecordError) marks the partition uncleanable, as
Kafka's LogCleanerManager does: it is logged once and skipped by later sweeps (re-reading the
log up to the bad batch every backoff would only repeat the failure) until it is hosted by a
new log (a restart, or the topic deleted and created again). Other failures (an OSError, say
a full disk) are retried after the backoff.

Threads and locks: planning (segment map, high watermark / last stable offset, one duplicate
file descriptor per segment) and each swap (``LocalLog.replace_segments``: a few renames and one
directory fsync) run on the event loop with the partition's asyncio lock held, so the segment
map changes atomically for readers; the offset map and segment rewrites run without the lock in
a one-thread executor (the loop never blocks on them). The swap is the partition's
``replace_segments``, which also reloads the aborted transactions of the replaced range from
the rewritten ``.txnindex`` (a read_committed fetch never lists a transaction whose data and
marker the cleaner removed) and deletes the producer snapshots of the replaced segments (their
number stays bounded by the segments'; broker/partition.py). A swap finds the planned segments
gone (retention, deletion) and is abandoned: its ``.swap`` files are removed, the log is
untouched.

Producer state: the partition's ``last_records_of_active_producers()`` (Kafka's), read under
its lock with the plan, says which batch of each active producer is kept even when compaction
empties it (segment_rewrite.py); with a partition that has no such method every producer in
the cleaned range counts as active.

Metrics (prometheus_client, the broker's registry)::

    tiered_mq_log_cleaner_bytes_cleaned_total      bytes read by pass 2
    tiered_mq_log_cleaner_bytes_written_total      bytes written by pass 2
    tiered_mq_log_cleaner_records_removed_total    records dropped (superseded, tombstones, aborted)
    tiered_mq_log_cleaner_last_clean_time_seconds  wall time of the last completed pass
    tiered_mq_log_cleaner_passes_total             completed passes
    tiered_mq_log_cleaner_uncleanable_partitions   partitions skipped for unreadable data
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

from tiered_mq.abandonable import to_thread_abandonable
from tiered_mq.compaction.cleaner import (
    CleanerStats,
    SegmentSource,
    build_offset_map,
    group_segments,
    plan_cleaning,
    read_cleaner_checkpoint,
    write_cleaner_checkpoint,
)
from tiered_mq.compaction.offset_map import OffsetMap
from tiered_mq.compaction.segment_rewrite import (
    CleanedGroup,
    LastRecord,
    clean_group,
    discard_swap,
    producer_last_batches,
)
from tiered_mq.compaction.txn_filter import AbortedTxns, TxnMarkers
from tiered_mq.errors import CorruptRecordError
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.periodic import schedule
from tiered_mq.record.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

DEFAULT_BACKOFF_MS = 15_000
DEFAULT_DEDUPE_BUFFER = 128 * 1024 * 1024


class CleanablePartition(Protocol):
    lock: asyncio.Lock
    log: LocalLog
    high_watermark: int

    def replace_segments(self, old: Sequence[LogSegment], new_base: int) -> LogSegment:
        """``LocalLog.replace_segments``, plus whatever the partition keeps about the range
        (its aborted transactions, from the new ``.txnindex``; its producer snapshots)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class CleanerMetrics:
    def __init__(self, registry: CollectorRegistry | None) -> None:
        kw: dict[str, Any] = {"registry": registry}
        self.bytes_cleaned = Counter(
            "tiered_mq_log_cleaner_bytes_cleaned", "Bytes read by the log cleaner", **kw
        )
        self.bytes_written = Counter(
            "tiered_mq_log_cleaner_bytes_written", "Bytes written by the log cleaner", **kw
        )
        self.records_removed = Counter(
            "tiered_mq_log_cleaner_records_removed", "Records removed by compaction", **kw
        )
        self.passes = Counter("tiered_mq_log_cleaner_passes", "Completed cleaning passes", **kw)
        self.last_clean_time = Gauge(
            "tiered_mq_log_cleaner_last_clean_time_seconds", "End of the last pass", **kw
        )
        self.uncleanable = Gauge(
            "tiered_mq_log_cleaner_uncleanable_partitions",
            "Partitions the cleaner skips because their data cannot be read",
            **kw,
        )


class LogCleaner:
    def __init__(
        self,
        partitions: Callable[[], Mapping[TopicPartition, CleanablePartition]],
        *,
        backoff_ms: int = DEFAULT_BACKOFF_MS,
        dedupe_buffer_bytes: int = DEFAULT_DEDUPE_BUFFER,
        max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self._partitions = partitions
        self.backoff_ms = backoff_ms
        self.dedupe_buffer_bytes = dedupe_buffer_bytes
        self.max_decompressed_bytes = max_decompressed_bytes
        self.clock = clock
        self.metrics = CleanerMetrics(registry)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-cleaner")
        self._task: asyncio.Task[None] | None = None
        self._horizons: dict[TopicPartition, int] = {}  # earliest pending delete horizon
        self._checkpoints: dict[TopicPartition, tuple[LocalLog, int | None]] = {}
        self._uncleanable: dict[TopicPartition, LocalLog] = {}  # the log that failed
        self._abort = threading.Event()  # set by close: pass 1 in the executor ends

    # lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(
            schedule("log cleaner sweep", self.clean_once, self.backoff_ms, log), name="log-cleaner"
        )

    async def close(self) -> None:
        """Stop the sweeps. A pass in progress ends at its next batch (Kafka's cleaner
        aborts its cleaning on shutdown): its ``.cleaned`` files are removed and a ``.swap``
        written but not yet swapped in is discarded, so a stop never waits for a whole
        rewrite nor leaves the next start a swap to complete."""
        self._abort.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown)

    # work ---------------------------------------------------------------------------------------
    async def clean_once(self) -> int:
        """One sweep: clean every cleanable compacted log, filthiest first; returns passes."""
        now = self.clock()
        candidates: list[tuple[float, TopicPartition, CleanablePartition, bool]] = []
        hosted = dict(self._partitions())
        for gone in [tp for tp in self._checkpoints if tp not in hosted]:
            del self._checkpoints[gone]
        for tp, failed in list(self._uncleanable.items()):
            if tp not in hosted or hosted[tp].log is not failed:  # a new log: try it again
                del self._uncleanable[tp]
        for tp, partition in hosted.items():
            config = partition.log.config
            if not config.compact or config.remote_storage_enable or tp in self._uncleanable:
                continue
            force = self._horizons.get(tp, now + 1) <= now
            plan = plan_cleaning(
                partition.log, self._checkpoint(tp, partition), _max_offset(partition), now, force
            )
            if plan is None:
                continue
            if force or plan.must_clean or plan.dirty_ratio > config.min_cleanable_dirty_ratio:
                candidates.append((plan.dirty_ratio, tp, partition, force))
        done = 0
        for _, tp, partition, force in sorted(candidates, key=lambda c: -c[0]):
            try:
                if await self.clean_partition(tp, partition, force=force) is not None:
                    done += 1
            except CorruptRecordError as exc:
                log.error("%s: cleaning failed, marking the partition uncleanable: %s", tp, exc)
                self._uncleanable[tp] = partition.log
            except Exception:
                log.exception("%s: cleaning failed", tp)
        self.metrics.uncleanable.set(len(self._uncleanable))
        return done

    def _checkpoint(self, tp: TopicPartition, partition: CleanablePartition) -> int | None:
        """The log's first dirty offset, cached with the log it belongs to: a topic deleted
        and created again under the same name is a new log, whose directory holds no
        checkpoint yet (the old one went with the old directory)."""
        cached = self._checkpoints.get(tp)
        if cached is None or cached[0] is not partition.log:
            cached = (partition.log, read_cleaner_checkpoint(partition.log.dir))
            self._checkpoints[tp] = cached
        return cached[1]

    async def clean_partition(
        self, tp: TopicPartition, partition: CleanablePartition, *, force: bool = False
    ) -> CleanerStats | None:
        """One pass over one log; None when it was not cleanable."""
        loop = asyncio.get_running_loop()
        now = self.clock()
        async with partition.lock:
            local_log = partition.log
            config = local_log.config
            if self._partitions().get(tp) is not partition:
                return None
            plan = plan_cleaning(
                local_log, self._checkpoint(tp, partition), _max_offset(partition), now, force
            )
            if plan is None:
                return None
            sources = [SegmentSource.of(local_log, s) for s in plan.segments]
            aborted = _aborted_txns(partition, local_log.local_log_start_offset, plan.end_offset)
            active = _active_producers(partition)
        stats = CleanerStats()
        try:
            omap = OffsetMap.for_buffer(self.dedupe_buffer_bytes)
            end = await loop.run_in_executor(
                self._executor,
                build_offset_map,
                sources,
                plan.first_dirty_offset,
                plan.end_offset,
                omap,
                self.max_decompressed_bytes,
                aborted,
                self._abort,
            )
            chosen = [s for s in sources if s.next_base <= end]
            last_batches = await loop.run_in_executor(
                self._executor, producer_last_batches, chosen, active
            )
            markers = TxnMarkers()
            for group in group_segments(chosen, config):
                # cancelled (the cleaner's close), the rewrite ends at its next batch, and the
                # .swap files of one that had ended are removed: a stale swap must never be
                # completed by the next open
                cleaned = await to_thread_abandonable(
                    partial(
                        clean_group,
                        local_log.dir,
                        group,
                        omap,
                        last_batches,
                        config,
                        now,
                        stats,
                        self.max_decompressed_bytes,
                        aborted,
                        markers,
                    ),
                    partial(_discard_unswapped, local_log.dir, group[0].base_offset),
                    executor=self._executor,
                )
                if cleaned is None:
                    continue
                async with partition.lock:
                    swapped = False
                    try:
                        if self._partitions().get(tp) is not partition:
                            return None
                        partition.replace_segments(cleaned.old, cleaned.base_offset)
                        swapped = True
                    except ValueError as exc:
                        log.info("%s: cleaning abandoned: %s", tp, exc)
                        return None
                    finally:
                        if not swapped:  # a stale swap must never be completed later
                            with contextlib.suppress(OSError):
                                discard_swap(local_log.dir, cleaned.base_offset)
                stats.segments_replaced += len(group)
            await loop.run_in_executor(self._executor, write_cleaner_checkpoint, local_log.dir, end)
            self._checkpoints[tp] = (local_log, end)
        finally:
            # in the executor: a job still reading them (cancelled await) finishes first
            await loop.run_in_executor(self._executor, _close_sources, sources)
        if stats.next_horizon_ms is not None:
            self._horizons[tp] = stats.next_horizon_ms
        else:
            self._horizons.pop(tp, None)
        self._record(tp, stats)
        return stats

    def _record(self, tp: TopicPartition, stats: CleanerStats) -> None:
        self.metrics.bytes_cleaned.inc(stats.bytes_read)
        self.metrics.bytes_written.inc(stats.bytes_written)
        self.metrics.records_removed.inc(stats.records_removed)
        self.metrics.passes.inc()
        self.metrics.last_clean_time.set(time.time())
        log.info(
            "%s: cleaned %d bytes into %d, removed %d of %d records, replaced %d segments",
            tp,
            stats.bytes_read,
            stats.bytes_written,
            stats.records_removed,
            stats.records_read,
            stats.segments_replaced,
        )


def _discard_unswapped(dir: Path, base: int, cleaned: CleanedGroup | None) -> None:
    """Remove the ``.swap`` files of ``cleaned``, the group a cancelled pass rewrote (None:
    the rewrite changed nothing and wrote none)."""
    if cleaned is not None:
        with contextlib.suppress(OSError):
            discard_swap(dir, base)


def _close_sources(sources: list[SegmentSource]) -> None:
    for source in sources:
        source.close()


def _max_offset(partition: CleanablePartition) -> int:
    """The last stable offset when the partition has one, else the high watermark."""
    lso = getattr(partition, "last_stable_offset", None)
    hwm = partition.high_watermark
    return hwm if lso is None else min(int(lso), hwm)


def _active_producers(partition: CleanablePartition) -> dict[int, LastRecord] | None:
    """Producer id -> last record of the partition's active producers (None: it keeps no
    producer state, so every producer in the cleaned range counts as active)."""
    collect = getattr(partition, "last_records_of_active_producers", None)
    return dict(collect()) if callable(collect) else None


def _aborted_txns(partition: CleanablePartition, start: int, end: int) -> AbortedTxns | None:
    """The partition's aborted transactions overlapping [start, end) (None: it keeps none, so
    transactional batches are kept as they are)."""
    collect = getattr(partition, "aborted_transactions", None)
    return AbortedTxns(collect(start, end)) if callable(collect) else None
