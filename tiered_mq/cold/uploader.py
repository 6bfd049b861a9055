"""PartitionUploader: the leader's background task copying one partition's log to the bucket.

Each pass (every ``check_interval_s``, or at once after ``wake()``, e.g. on roll):

1. read the manifest if not known (FencedError if a later leader epoch wrote it), once the
   pending deletions of a topic of the same name are done (``before_load``); a manifest of
   another topic id (a deleted incarnation, manifest.py) is replaced by a fresh one, after
   the topic's topic.json carries this topic's id (``ensure_topic_manifest``), and the
   objects it named are deleted (best effort: a scrub finds those left);
2. clean up unfinished copies and deletions (remote_retention.cleanup_unfinished);
3. upload, oldest first, every rolled (non-active) segment wholly below the high watermark
   (the caller's ``high_watermark()``, the last stable offset when transactions are in play)
   holding offsets above the highest uploaded offset, and below the first segment whose
   ``.txnindex`` lacks an entry (a write that failed on a full disk:
   ``LocalLog.txn_index_unwritten_from``; the restart's recovery restores it), so the bucket
   never gets an aborted transaction's records without its entry;
4. keep the local log start offset in step with the bucket, remote retention, and again;
5. local retention: ``log.apply_retention(now, upper_bound_offset=uploaded end + 1)``, so only
   uploaded segments are ever deleted locally.

With ``remote.log.copy.disable=true`` (KIP-950) step 3 is skipped: the bucket stays readable and
remote retention goes on, while local retention applies retention.ms/bytes to the local log
(hot/retention.py) and moves the log start offset with it, as Kafka does; the remote segments
below it are then deleted. The copy lag is then 0, not counted: nothing waits for an upload by
design (Kafka's RemoteLogManager cancels the copy task and calls ``resetLagStats``); the same
holds while remote storage is disabled.
With ``remote.storage.enable=false`` a pass does nothing (so the next one waits for ``wake()``,
which a config change gives, ReplicaManager.reconfigure_topic, not for ``check_interval_s``:
thousands of untiered partitions polled every second cost a broker 10% of a core idle), unless
``remote.log.delete.on.disable=true`` (KIP-950: the topic was tiered and turned off): then it
raises the log start offset to the local log start offset (consumers below it get
OFFSET_OUT_OF_RANGE and reset, as in Kafka; the config change itself raised it already, durably,
before it was answered: broker/remote_disable.py) and only then deletes every remote segment of
the partition through the manifest state machine. Each pass redoes what is left, so a crash or an
unreachable bucket only delays the deletion; nothing below the local log is readable meanwhile.
Once a partition that had a manifest holds no segment any more, ``on_remote_log_deleted(tp)``
is awaited (once per uploader and disabling): the broker then removes the topic's topic.json
when no partition has data left (RemoteLogManager.remove_topic_manifest).

One segment upload: read ``.log`` (validated batch by batch with CRC-32C and summarized),
``.index``, ``.timeindex``, the producer snapshot at the segment's end offset and the
``.txnindex`` when present; manifest entry COPY_STARTED; the objects, all at once, under fresh
keys (layout.py); entry COPY_FINISHED. A failure cancels the other puts, deletes every object
key of the entry (the written ones; the others are absent), drops the entry and the pass is
retried with exponential backoff (``retry_initial_s`` doubling up to ``retry_max_s``);
meanwhile local segments are kept and the copy lag metric grows.
A lost conditional manifest put against a later epoch (FencedError) ends the task: this broker
is no longer the leader. Segments are read whole into memory (bounded by segment.bytes).

Event-loop cost (a pass runs on the loop; every partition has one a second by default): no
directory listing, stat or file read of its own. Segment files are read, checked and summarized
in a worker thread (``_prepare``), a large manifest is parsed in one (manifest_writer.py) and
encoded in one before each put. A rolled segment whose successor starts at or below the
uploaded end is not asked for its next offset (which loads the indexes and reads the tail of a
segment opened from disk), so a start's first passes read no file of an uploaded segment; the
local log's retention (step 5) still reads the oldest segment's indexes once, on the loop
(hot/retention.py asks it for its largest timestamp). An idle pass (nothing uploaded, nothing
deleted, the manifest unchanged) does not count the copy lag again and publishes nothing: the
gauges and the reader's manifest change only when their values do. Nor does it scan the
manifest's entries (thousands for a partition kept for months): a manifest version found with
no unfinished copy or deletion (step 2) and none of its uploaded segments below the log start
offset is not scanned for them again; any write or reload gives a new version, which is. What
is uploaded, when the manifest is written and what a crash leaves are unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from tiered_mq.cold import layout
from tiered_mq.cold.log_view import (
    LocalLogView,
    LogConfigView,
    RolledSegment,
    read_segment_files,
)
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.manifest_writer import FencedError, ManifestWriter
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.rate_limiter import TokenBucket
from tiered_mq.cold.remote_index import SegmentSummary, summarize_log
from tiered_mq.cold.remote_retention import (
    cleanup_unfinished,
    delete_remote_segments,
    replace_foreign_manifest,
    retention_victims,
)
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UploaderSettings:
    check_interval_s: float = 1.0
    retry_initial_s: float = 0.5
    retry_max_s: float = 30.0
    local_retention: bool = True

    def retry_delay(self, failures: int) -> float:
        """Seconds before the next try after ``failures`` failures in a row (>= 1)."""
        return min(self.retry_max_s, self.retry_initial_s * 2.0 ** (failures - 1))


class PartitionUploader:
    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        tp: TopicPartition,
        local_log: LocalLogView,
        config: LogConfigView,
        high_watermark: Callable[[], int],
        *,
        leader_epoch: int,
        lock: AbstractAsyncContextManager[Any] | None,
        limiter: TokenBucket,
        metrics: RemoteMetrics,
        settings: UploaderSettings,
        clock: Callable[[], int],
        on_manifest: Callable[[TopicPartition, PartitionManifest], None],
        on_remote_log_deleted: Callable[[TopicPartition], Awaitable[None]] | None = None,
        config_source: Callable[[], LogConfigView] | None = None,
        topic_id: str | None = None,
        before_load: Callable[[], Awaitable[None]] | None = None,
        ensure_topic_manifest: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.tp = tp
        self.log = local_log
        self.config = config
        self.high_watermark = high_watermark
        self.writer = ManifestWriter(store, prefix, tp, leader_epoch, topic_id)
        self._before_load = before_load
        self._ensure_topic_manifest = ensure_topic_manifest
        self._lock = lock
        self._limiter = limiter
        self._metrics = metrics
        self._settings = settings
        self._clock = clock
        self._on_manifest = on_manifest
        self._on_remote_log_deleted = on_remote_log_deleted
        self._config_source = config_source
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._in_flight: set[str] = set()
        self._loaded = False
        self._start_synced = False  # _sync_log_start_offset ran (a new leader's lowering)
        self._deletion_reported = False  # on_remote_log_deleted ran since remote storage went off
        self.state = "created"
        self.last_error: str | None = None
        self.copy_lag_bytes = 0
        self.copy_lag_segments = 0
        # what _publish last gave the metrics and the reader (none yet)
        self._published_lag: tuple[int, int] | None = None
        self._published_manifest: PartitionManifest | None = None
        # manifest versions found to need nothing: no unfinished copy or deletion (_ready); no
        # uploaded segment below the log start offset (the bound) (_apply_remote_retention)
        self._clean: PartitionManifest | None = None
        self._none_below: tuple[PartitionManifest, int] | None = None

    @property
    def manifest(self) -> PartitionManifest:
        return self.writer.manifest

    def _locked(self) -> AbstractAsyncContextManager[Any]:
        return self._lock if self._lock is not None else contextlib.nullcontext()

    def start(self) -> None:
        self.state = "running"
        self._task = asyncio.create_task(self._upload_routine(), name=f"upload-{self.tp}")

    def wake(self) -> None:
        self._wake.set()

    def cancel(self) -> None:
        """Cancel the routine now (``stop`` awaits its end): it resumes no pass and publishes
        no metric after this returns, even when what it awaited completed in this loop
        turn; so a partition's series dropped right after stay dropped."""
        if self._task is not None:
            self._task.cancel()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.state == "running":
            self.state = "stopped"

    async def _upload_routine(self) -> None:
        failures = 0
        while True:
            self._wake.clear()  # before the pass: a wake() during it calls for another
            try:
                await self.run_pass()
                failures, self.last_error = 0, None
                delay = self._settings.check_interval_s if self._passes_due() else None
            except FencedError as e:
                self.state, self.last_error = "fenced", str(e)
                log.warning("%s: stopping uploads, deposed leader: %s", self.tp, e)
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:
                failures += 1
                self.last_error = f"{type(e).__name__}: {e}"
                self._metrics.upload_errors.inc()
                self._metrics.topic(self.tp.topic).upload_errors += 1
                self._publish_lag()  # the lag grows while the bucket is unreachable
                delay = self._settings.retry_delay(failures)
                log.warning("%s: tiering pass failed (retry in %.1fs): %s", self.tp, delay, e)
                self._wake.clear()  # the retry waits out its backoff
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns normally when the
            # wait ends in the loop turn that cancels it (a roll's wake() beside a stop()),
            # the cancellation lost, and stop() would then await this task forever
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()

    def _passes_due(self) -> bool:
        """Whether passes are due every ``check_interval_s``: not while remote storage is
        disabled without delete.on.disable, when a pass does nothing until the config changes."""
        config = self.config if self._config_source is None else self._config_source()
        return bool(
            getattr(config, "remote_storage_enable", True)
            or getattr(config, "remote_log_delete_on_disable", False)
        )

    async def run_pass(self) -> None:
        """One pass (see the module docstring); raises on the first failure."""
        if self._config_source is not None:
            self.config = self._config_source()
        copying = getattr(self.config, "remote_copy_enabled", True)
        if not copying:  # Kafka's resetLagStats: nothing is pending upload by design
            self.copy_lag_bytes = self.copy_lag_segments = 0
        if not getattr(self.config, "remote_storage_enable", True):
            if getattr(self.config, "remote_log_delete_on_disable", False):
                await self._delete_remote_log()  # publishes the lag too
            elif self._loaded:  # tiered earlier in this leadership: its lag series goes to 0
                self._publish_lag()
            return
        self._deletion_reported = False
        await self._ready()
        candidates = await self._candidates() if copying else []
        before = self.manifest  # replaced by every write (ManifestWriter.commit)
        # Pipeline: the next segment is read and checked while this one is uploaded.
        prepared = self._prepare_soon(candidates[0]) if candidates else None
        for i, candidate in enumerate(candidates):
            assert prepared is not None
            ready = await prepared
            prepared = self._prepare_soon(candidates[i + 1]) if i + 1 < len(candidates) else None
            try:
                if ready is not None:
                    await self._upload_segment(candidate, *ready)
            except BaseException:
                if prepared is not None:
                    prepared.cancel()
                raise
        await self._sync_log_start_offset()
        await self._apply_remote_retention()
        await self._sync_log_start_offset()
        deleted: list[Any] = []
        if self._settings.local_retention:
            async with self._locked():
                deleted = self.log.apply_retention(self._clock(), self.manifest.upload_bound())
        if copying and (candidates or deleted or self.manifest is not before):
            await self._candidates()  # refresh the copy lag after this pass
        self._publish()

    async def _ready(self, *, take_over: bool = True) -> None:
        """The manifest loaded (once) and unfinished copies and deletions cleaned up; with
        ``take_over``, a foreign manifest replaced (module docstring, step 1)."""
        if not self._loaded:
            if self._before_load is not None:
                await self._before_load()
            await self.writer.load()
            self._loaded = True
            self._publish()
        if take_over and self._ensure_topic_manifest is not None:
            ours = self.writer.etag is not None and self.writer.foreign is None
            if not ours or self.manifest.topic_id != self.writer.topic_id:
                # topic.json first: a partition manifest of an id topic.json does not carry
                # would be judged an earlier incarnation's (scrub.py, Spark)
                await self._ensure_topic_manifest()
        if take_over and self.writer.foreign is not None:
            await replace_foreign_manifest(self.store, self.writer)
        if self.manifest is not self._clean:  # a scan of every entry: once per version
            await cleanup_unfinished(
                self.store, self.writer, self._in_flight, self._clock, self._metrics
            )
            if not self._in_flight:  # nothing unfinished is left in the manifest now
                self._clean = self.manifest

    async def _delete_remote_log(self) -> None:
        """Remote storage turned off with remote.log.delete.on.disable (module docstring).

        The manifest's log start offset goes to the local log's, in the same write that
        starts the deletion, not past the deleted segments: they may hold local data that
        stays readable, which a later remote.storage.enable=true must upload again (a stale
        manifest log start is the upload bound and remote retention's, and the new leader's
        log start). Set back only after the deletion, an interruption (bucket down, restart)
        would leave it stale for the re-enabled uploader, which would then drop that data."""
        async with self._locked():
            self.log.set_log_start_offset(self.log.local_log_start_offset)
            log_start = self.log.log_start_offset
        await self._ready(take_over=False)  # a foreign manifest's segments are not victims
        victims = [s for s in self.manifest.segments if s.state == SegmentState.COPY_FINISHED]
        if victims:
            log.info("%s: remote storage disabled, deleting remote log", self.tp)
        await delete_remote_segments(
            self.store, self.writer, victims, self._clock, self._metrics, log_start
        )
        self._publish()
        tiered = self.writer.etag is not None  # this partition has a manifest in the bucket
        if tiered and not self.manifest.segments and not self._deletion_reported:
            if self._on_remote_log_deleted is not None:
                await self._on_remote_log_deleted(self.tp)
            self._deletion_reported = True

    async def _candidates(self) -> list[RolledSegment]:
        uploaded_end = self.manifest.upload_bound() - 1
        async with self._locked():
            hwm = self.high_watermark()
            unwritten = self.log.txn_index_unwritten_from
            if unwritten is not None:
                hwm = min(hwm, unwritten)
            segments = self.log.segments()
            # A rolled segment's offsets lie below the next segment's base offset: those of
            # one whose successor starts at or below the uploaded end are all uploaded, and
            # its own next offset (which may load its indexes and read its tail, on the loop:
            # a segment opened from disk) is not asked for.
            found = [
                RolledSegment(s.base_offset, s.next_offset(), s.size)
                for s, following in pairwise(segments)
                if s.size > 0
                and following.base_offset - 1 > uploaded_end
                and s.next_offset() - 1 > uploaded_end
            ]
        self.copy_lag_segments = len(found)
        self.copy_lag_bytes = sum(c.size for c in found)
        return [c for c in found if c.next_offset <= hwm]

    def _prepare_soon(
        self, c: RolledSegment
    ) -> asyncio.Task[tuple[dict[str, bytes], SegmentSummary] | None]:
        return asyncio.create_task(asyncio.to_thread(self._prepare, c))

    def _prepare(self, c: RolledSegment) -> tuple[dict[str, bytes], SegmentSummary] | None:
        """Read a segment's files and check and summarize its .log (in a worker thread)."""
        try:
            files = read_segment_files(self.log.dir, c)
        except FileNotFoundError:
            log.info("%s: segment %d vanished before upload", self.tp, c.base_offset)
            return None
        return files, summarize_log(files[layout.LOG])

    async def _upload_segment(
        self, c: RolledSegment, files: dict[str, bytes], summary: SegmentSummary
    ) -> None:
        upload_id = uuid.uuid4().hex[:16]
        epoch = self.writer.leader_epoch
        keys: dict[str, str | None] = {
            suffix: layout.segment_key(
                self.prefix,
                self.tp.topic,
                self.tp.partition,
                c.base_offset,
                epoch,
                upload_id,
                suffix,
            )
            if suffix in files
            else None
            for suffix in layout.SEGMENT_SUFFIXES
        }
        entry = RemoteSegment.from_summary(
            summary,
            upload_id=upload_id,
            uploader_epoch=epoch,
            objects=keys,
            state=SegmentState.COPY_STARTED,
            state_ms=self._clock(),
        )
        self._in_flight.add(upload_id)
        try:
            await self.writer.commit(lambda m: m.upsert(entry))
            objects = {suffix: key for suffix, key in keys.items() if key is not None}
            try:
                async with asyncio.TaskGroup() as puts:  # a failure cancels the others
                    for suffix, key in objects.items():
                        puts.create_task(self._put(key, files[suffix]))
            except Exception as e:
                await self._abandon(entry, list(objects.values()))
                if isinstance(e, ExceptionGroup):
                    raise e.exceptions[0] from None  # the first failure, as callers expect
                raise
            finished = entry.with_state(SegmentState.COPY_FINISHED, self._clock())
            await self.writer.commit(lambda m: m.upsert(finished))
        finally:
            self._in_flight.discard(upload_id)
        self._metrics.upload_segments.inc()
        self._metrics.topic(self.tp.topic).upload_segments += 1
        self._publish()
        log.debug("%s: uploaded segment %d-%d", self.tp, entry.base_offset, entry.end_offset)

    async def _put(self, key: str, data: bytes) -> None:
        await self._limiter.acquire(len(data))
        await self.store.put(key, data)
        self._metrics.upload_bytes.inc(len(data))
        self._metrics.topic(self.tp.topic).upload_bytes += len(data)

    async def _abandon(self, entry: RemoteSegment, written: list[str]) -> None:
        """Best effort after a failed copy; what fails here cleanup_unfinished redoes."""
        try:
            await self.store.delete_many(written)
            dropping = entry.with_state(SegmentState.DELETE_STARTED, self._clock())
            dropped = dropping.with_state(SegmentState.DELETE_FINISHED, self._clock())
            await self.writer.commit(lambda m: m.upsert(dropped))
        except FencedError:
            raise
        except Exception as e:
            log.info("%s: cleanup of failed upload deferred: %s", self.tp, e)

    async def _apply_remote_retention(self) -> None:
        manifest = self.manifest
        uploaded_end = manifest.end_offset()
        async with self._locked():
            local_only = sum(s.size for s in self.log.segments() if s.base_offset > uploaded_end)
        victims = retention_victims(
            manifest,
            self._clock(),
            self.config.retention_ms,
            self.config.retention_bytes,
            local_only,
        )
        async with self._locked():
            log_start = self.log.log_start_offset
        bound = max(log_start, manifest.log_start_offset)
        below_start: list[RemoteSegment] = []
        swept = self._none_below
        if swept is None or swept[0] is not manifest or swept[1] != bound:  # once per version
            below_start = [
                s
                for s in manifest.segments
                if s.state == SegmentState.COPY_FINISHED and s.end_offset < bound
            ]
            if not below_start:
                self._none_below = (manifest, bound)
        if not victims and not below_start:
            return
        chosen = {s.upload_id: s for s in [*victims, *below_start]}
        ordered = [s for s in manifest.segments if s.upload_id in chosen]
        await delete_remote_segments(
            self.store,
            self.writer,
            ordered,
            self._clock,
            self._metrics,
            on_started=self._remote_deletion_started,
        )

    async def _remote_deletion_started(self) -> None:
        """Remote retention has marked its victims DELETE_STARTED: before any of their objects
        goes, the reader stops serving them and the log start offset moves past them
        (ListOffsets -2 answers it, fetches below it OFFSET_OUT_OF_RANGE). Until then a fetch
        of a segment being deleted answered KAFKA_STORAGE_ERROR and the earliest offset was
        one that could no longer be read."""
        self._publish()
        await self._sync_log_start_offset()

    async def _sync_log_start_offset(self) -> None:
        """Keep the log start offset of the local log and of the manifest in step.

        Lowered to the bucket's first offset when the bucket's data joins the local data and
        nothing trimmed the local log, at this leader's first sync only (a new leader): a log
        start offset raised later to the local log start (DeleteRecords, local retention with
        remote.log.copy.disable) is never undone; raised after remote retention; a log start
        offset raised locally (DeleteRecords) goes to the manifest, wherever it lies: inside a
        remote segment too, whose records below it Spark, which reads the bucket alone, must
        not return, and also when it is the local log start (DeleteRecords inside data that the
        local log still holds moves both); the next pass deletes the remote segments wholly
        below it."""
        manifest = self.manifest
        remote_start = manifest.remote_log_start_offset()
        first, self._start_synced = not self._start_synced, True
        async with self._locked():
            current = self.log.log_start_offset
            local_start = self.log.local_log_start_offset
            joined = manifest.next_offset() >= local_start
            if (
                first
                and remote_start is not None
                and joined
                and current == local_start > remote_start
            ):
                self.log.set_log_start_offset(remote_start)
                return
            if manifest.log_start_offset > current:
                self.log.set_log_start_offset(
                    min(manifest.log_start_offset, self.log.log_end_offset)
                )
                return
        if current > manifest.log_start_offset:
            await self.writer.commit(
                lambda m: setattr(m, "log_start_offset", max(m.log_start_offset, current))
            )

    def _publish_lag(self) -> None:
        lag = (self.copy_lag_bytes, self.copy_lag_segments)
        if lag == self._published_lag:  # an idle pass: the series already say so
            return
        labels = (self.tp.topic, str(self.tp.partition))
        self._metrics.copy_lag_bytes.labels(*labels).set(self.copy_lag_bytes)
        self._metrics.copy_lag_segments.labels(*labels).set(self.copy_lag_segments)
        self._published_lag = lag

    def _publish(self) -> None:
        """The copy lag and the manifest's size to the metrics, the manifest to the reader;
        each only when it changed since this uploader last published it (a manifest is
        replaced, never changed in place, by every write: ManifestWriter.commit)."""
        m = self.manifest
        self._publish_lag()
        if m is self._published_manifest:
            return
        self._metrics.set_log_size(
            self.tp.topic, self.tp.partition, m.size_bytes(), len(m.readable_segments())
        )
        self._on_manifest(self.tp, m)
        self._published_manifest = m
