"""RemoteLogManager: the cold tier's one seam to the broker.

The broker creates one per process (``store`` from ``open_object_store``, ``prefix`` from the
URL), awaits ``start()`` and ``close()``, and per partition with remote storage enabled::

    rlm.on_become_leader(tp, partition)         # or (tp, local_log, config, high_watermark,
                                                #     leader_epoch=e, lock=partition.lock)
    rlm.on_stop(tp)                             # leadership moved away / partition closed
    rlm.notify_roll(tp)                         # optional: LocalLog's on_roll, uploads at once
    await rlm.read(tp, offset, max_bytes)       # fetch below the local log start offset
    await rlm.read_regions(tp, offset, max_bytes, span=True)  # the same as a RemoteRead:
                                                # FileRegions over chunk files (sendfile), their
                                                # size and next offset, going on across
                                                # segments (filled fetches); min_one=False:
                                                # nothing if the first batch is larger
    await rlm.fetches.within(tp, key, read)     # a fetch's wait for a bucket read, bounded by
                                                # remote.fetch.max.wait.ms (None: it expired;
                                                # remote_fetch.py)
    rlm.fetch_max_bytes                         # cap of a filled (single-partition) cold fetch
                                                # (at most half the chunk cache)
    await rlm.offset_for_timestamp(tp, ts)      # ListOffsets by timestamp on cold data
    await rlm.list_offsets.lookup(tp, key, find)  # a ListOffsets' wait for a bucket lookup,
                                                # bounded by remote.list.offsets.request.
                                                # timeout.ms (RequestTimedOutError past it;
                                                # remote_list_offsets.py)
    await rlm.aborted_transactions(tp, start, end)  # the bucket's aborted transactions
                                                # overlapping [start, end) (.txnindex objects)
    rlm.remote_log_start_offset(tp)             # first offset in the bucket (None: empty)
    rlm.upload_bound(tp)                        # first offset not yet uploaded
    await rlm.record_topic_deletion(topic, id)  # before the metadata goes (topic_deletion.py)
    await rlm.delete_topic(topic, id)           # uploaders stopped; the objects of that topic
                                                # id deleted in the background, with retries
    await rlm.write_topic_manifest(topic, partitions, configs, id)
    await rlm.remove_topic_manifest(topic)      # topic.json, once no segment object is left
    rlm.on_remote_log_deleted = hook            # async hook(tp): a partition's remote log is
                                                # gone (remote.log.delete.on.disable)
    rlm.on_topic_manifest_needed = hook         # async hook(topic): write topic.json now
                                                # (an uploader's first manifest of a topic id
                                                # waits for a topic.json of that id)
    rlm.status()                                # per-partition tiering state (CLI, metrics)

``topic_ids(name)`` (a constructor argument) is the coordinator's id of a live topic, None
for none: uploaders stamp it on their manifests, and no part adopts a manifest of another id
(manifest.py).

``high_watermark`` returns the offset below which the uploader may copy (the last stable
offset when transactions are in play). ``lock`` is the partition's asyncio lock: the uploader
takes it around every call on the local log, which is not thread-safe. With
``local_retention`` (default) the uploader also runs the local log's retention, bounded by
``upload_bound``; a broker that runs it itself passes ``local_retention=False`` and the same
bound. Everything here runs on the broker's event loop; file reads go to worker threads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from prometheus_client import CollectorRegistry

from tiered_mq.cold import layout
from tiered_mq.cold.chunk_cache import DEFAULT_CHUNK_SIZE, ChunkCache
from tiered_mq.cold.log_view import LocalLogView, LogConfigView, PartitionView
from tiered_mq.cold.manifest import (
    ManifestFormatError,
    PartitionManifest,
    TopicManifest,
    parse_topic_manifest,
)
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.rate_limiter import TokenBucket
from tiered_mq.cold.remote_fetch import RemoteFetches
from tiered_mq.cold.remote_list_offsets import RemoteListOffsets
from tiered_mq.cold.remote_reader import DEFAULT_INDEX_CACHE_BYTES, RemoteRead, RemoteReader
from tiered_mq.cold.remote_txn_index import RemoteTxnIndex
from tiered_mq.cold.topic_deletion import DeletionJournal, RemoteTopicDeleter
from tiered_mq.cold.uploader import PartitionUploader, UploaderSettings
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.keyed_locks import KeyedLocks
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

DEFAULT_FETCH_MAX_BYTES = 64 * 1024 * 1024


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class PartitionStatus:
    topic: str
    partition: int
    state: str  # running | fenced | stopped
    leader_epoch: int
    remote_log_start_offset: int | None
    remote_end_offset: int  # highest uploaded offset, -1 when none
    remote_segments: int
    remote_bytes: int
    copy_lag_segments: int
    copy_lag_bytes: int
    last_error: str | None


class RemoteLogManager:
    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        cache_dir: Path | str,
        cache_bytes: int = 256 * 1024 * 1024,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        read_ahead_chunks: int = 2,
        fetch_max_bytes: int = DEFAULT_FETCH_MAX_BYTES,
        fetch_max_wait_s: float = 0.5,
        list_offsets_timeout_s: float = 30.0,
        index_cache_bytes: int = DEFAULT_INDEX_CACHE_BYTES,
        upload_rate_bytes: float = 0,
        fetch_rate_bytes: float = 0,
        settings: UploaderSettings | None = None,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], int] = _now_ms,
        topic_ids: Callable[[str], str | None] | None = None,
        deletion_journal: Path | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix.strip("/")
        self._topic_ids: Callable[[str], str | None] = topic_ids or (lambda _topic: None)
        self.metrics = RemoteMetrics(registry)
        self._settings = settings or UploaderSettings()
        self._clock = clock
        self._upload_limiter = TokenBucket(upload_rate_bytes)
        self.cache = ChunkCache(
            store,
            cache_dir,
            cache_bytes,
            chunk_size=chunk_size,
            read_ahead=read_ahead_chunks,
            limiter=TokenBucket(fetch_rate_bytes),
            metrics=self.metrics,
        )
        # a cold fetch is sent from the chunk files it pins: at most half the cache (its
        # chunks and the read-ahead window after them, a quarter, fit the cache together)
        self.fetch_max_bytes = max(min(fetch_max_bytes, cache_bytes // 2), chunk_size)
        self.fetches = RemoteFetches(fetch_max_wait_s, self.metrics.fetch_expired)
        self.list_offsets = RemoteListOffsets(
            list_offsets_timeout_s, self.metrics.list_offsets_expired
        )
        self.reader = RemoteReader(
            store,
            self.prefix,
            self.cache,
            self.metrics,
            index_cache_bytes=index_cache_bytes,
            topic_ids=self._topic_ids,
        )
        self.deleter = RemoteTopicDeleter(
            store,
            self.prefix,
            DeletionJournal(deletion_journal) if deletion_journal is not None else None,
            self._topic_ids,
            retry_delay=self._settings.retry_delay,
            on_deleted=self._forget_topic_manifest,
        )
        self._topic_manifests: set[tuple[str, str]] = set()  # topic.json known of that id
        # one topic.json write per topic at a time: an uploader that needs it waits for the
        # admin's write in flight instead of sending a second PUT of the same key (SeaweedFS
        # answers the second only about 1 s later, and the first uploads wait that long);
        # a topic's lock lives only while in use, not for every topic name ever written
        self._topic_json_locks: KeyedLocks[str] = KeyedLocks()
        self.on_topic_manifest_needed: Callable[[str], Awaitable[None]] | None = None
        self.txn_index = RemoteTxnIndex(store, self.reader.manifest)
        self._uploaders: dict[TopicPartition, PartitionUploader] = {}
        self._stopping: set[asyncio.Future[None]] = set()
        self._started = False
        self.on_remote_log_deleted: Callable[[TopicPartition], Awaitable[None]] | None = None

    async def start(self) -> None:
        """Resume the pending topic deletions (topic_deletion.py)."""
        await self.deleter.start()
        self._started = True

    async def close(self) -> None:
        """Stop every uploader, the topic deletions (resumed at the next start) and the
        cache's read-ahead; the store stays the caller's."""
        await self.deleter.close()
        for tp in list(self._uploaders):
            self._stop_soon(tp)
        await asyncio.gather(*self._stopping, return_exceptions=True)
        await self.cache.close()
        self._started = False

    # ---- leadership ---------------------------------------------------------------------

    def on_become_leader(
        self,
        tp: TopicPartition,
        local_log: LocalLogView | PartitionView,
        config: LogConfigView | None = None,
        high_watermark: Callable[[], int] | None = None,
        *,
        leader_epoch: int = 0,
        lock: AbstractAsyncContextManager[Any] | None = None,
    ) -> None:
        """Start uploading ``tp`` (replacing an uploader of an older epoch).

        Either ``(tp, local_log, config, high_watermark, leader_epoch=, lock=)`` or the
        broker's ``(tp, partition)``: then the log, its current config, the last stable offset
        (never above the high watermark), the leader epoch and the lock come from the
        partition. Partitions whose config has ``remote.storage.enable=false`` are left alone.
        """
        config_source: Callable[[], LogConfigView] | None = None
        if config is None or high_watermark is None:
            partition = cast(PartitionView, local_log)
            local_log = cast(LocalLogView, partition.log)
            config = partition.log.config
            config_source = lambda: partition.log.config  # noqa: E731
            high_watermark = lambda: partition.last_stable_offset  # noqa: E731
            leader_epoch = partition.leader_epoch
            lock = partition.lock
        self._stop_soon(tp)
        topic_id = self._topic_ids(tp.topic)

        async def ensure_topic_manifest() -> None:
            if topic_id is not None:
                await self._ensure_topic_manifest(tp.topic, topic_id)

        uploader = PartitionUploader(
            self.store,
            self.prefix,
            tp,
            cast(LocalLogView, local_log),
            config,
            high_watermark,
            leader_epoch=leader_epoch,
            lock=lock,
            limiter=self._upload_limiter,
            metrics=self.metrics,
            settings=self._settings,
            clock=self._clock,
            on_manifest=self.reader.manifest_updated,
            on_remote_log_deleted=self._remote_log_deleted,
            config_source=config_source,
            topic_id=topic_id,
            before_load=lambda: self.deleter.wait(tp.topic),
            ensure_topic_manifest=ensure_topic_manifest,
        )
        self._uploaders[tp] = uploader
        self.metrics.start(tp.topic, tp.partition)
        uploader.start()

    def _stop_soon(self, tp: TopicPartition) -> None:
        old = self._uploaders.pop(tp, None)
        if old is not None:
            old.cancel()  # at once: no pass resumes before the stop task's first step
            task = asyncio.ensure_future(old.stop())
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    def on_stop(self, tp: TopicPartition) -> None:
        """Stop uploading ``tp`` (no longer leader, deleted or closing); reads keep working.
        Returns at once; the uploader task ends in the background (``stop_partition`` awaits)."""
        self._stop_soon(tp)
        self.reader.forget(tp)
        self.metrics.forget(tp.topic, tp.partition)

    async def stop_partition(self, tp: TopicPartition) -> None:
        """``on_stop`` and wait until the uploader has ended."""
        self.on_stop(tp)
        await asyncio.gather(*self._stopping, return_exceptions=True)

    def notify_roll(self, tp: TopicPartition) -> None:
        uploader = self._uploaders.get(tp)
        if uploader is not None:
            uploader.wake()

    def uploader(self, tp: TopicPartition) -> PartitionUploader | None:
        return self._uploaders.get(tp)

    async def _remote_log_deleted(self, tp: TopicPartition) -> None:
        if self.on_remote_log_deleted is not None:
            await self.on_remote_log_deleted(tp)

    # ---- reads --------------------------------------------------------------------------

    async def read(self, tp: TopicPartition, offset: int, max_bytes: int) -> bytes:
        return await self.reader.read(tp, offset, max_bytes)

    async def read_regions(
        self,
        tp: TopicPartition,
        offset: int,
        max_bytes: int,
        *,
        span: bool = False,
        min_one: bool = True,
    ) -> RemoteRead:
        return await self.reader.read_regions(tp, offset, max_bytes, span=span, min_one=min_one)

    async def offset_for_timestamp(
        self,
        tp: TopicPartition,
        timestamp: int,
        log_start_offset: int = 0,
        *,
        whole_segments: bool = False,
    ) -> tuple[int, int] | None:
        return await self.reader.offset_for_timestamp(
            tp, timestamp, log_start_offset, whole_segments=whole_segments
        )

    async def max_timestamp(self, tp: TopicPartition) -> int:
        """Greatest batch max timestamp of the bucket's readable segments (-1: none)."""
        manifest = await self.reader.manifest(tp)
        return max((s.max_timestamp for s in manifest.readable_segments()), default=-1)

    async def aborted_transactions(
        self, tp: TopicPartition, start_offset: int, end_offset: int
    ) -> list[AbortedTxn]:
        """Aborted transactions of the bucket's ``.txnindex`` objects overlapping
        [start_offset, end_offset) (see remote_txn_index.py)."""
        return await self.txn_index.aborted_transactions(tp, start_offset, end_offset)

    def _known_manifest(self, tp: TopicPartition) -> PartitionManifest | None:
        uploader = self._uploaders.get(tp)
        return uploader.manifest if uploader is not None else None

    def remote_log_start_offset(self, tp: TopicPartition) -> int | None:
        """First offset readable from the bucket for a partition this broker leads."""
        manifest = self._known_manifest(tp)
        return None if manifest is None else manifest.remote_log_start_offset()

    def highest_uploaded_offset(self, tp: TopicPartition) -> int:
        manifest = self._known_manifest(tp)
        return -1 if manifest is None else manifest.end_offset()

    def leader_epoch_of(self, tp: TopicPartition, offset: int) -> int | None:
        """The leader epoch ``offset`` was written in, from the leader epochs of the readable
        segment holding it (the last [epoch, first offset] entry at or below it, as Kafka's
        ``LeaderEpochFileCache.epochForOffset``): an offset DeleteRecords left below the log
        start offset counts in the segment holding the log start. None when no readable segment
        of this leader's manifest holds it, or its entries start after it."""
        manifest = self._known_manifest(tp)
        if manifest is None:
            return None
        segment = manifest.segment_for_offset(max(offset, manifest.log_start_offset))
        if segment is None or segment.base_offset > offset:
            return None
        epoch = None
        for entry_epoch, first in segment.leader_epochs:
            if first > offset:
                break
            epoch = entry_epoch
        return epoch

    def upload_bound(self, tp: TopicPartition) -> int:
        """First offset not yet uploaded: local retention may delete only below it."""
        manifest = self._known_manifest(tp)
        return 0 if manifest is None else manifest.upload_bound()

    async def remote_manifest(self, tp: TopicPartition) -> PartitionManifest:
        """The partition's manifest (the bucket's, for partitions led elsewhere)."""
        return await self.reader.manifest(tp)

    # ---- topics -------------------------------------------------------------------------

    async def write_topic_manifest(
        self, topic: str, partition_count: int, configs: dict[str, str], topic_id: str | None = None
    ) -> None:
        doc = TopicManifest(topic, partition_count, dict(configs), topic_id)
        async with self._topic_json_locks.hold(topic):
            await self.store.put(layout.topic_manifest_key(self.prefix, topic), doc.to_json())
            if topic_id is not None:
                self._topic_manifests.add((topic, topic_id))

    def _forget_topic_manifest(self, topic: str) -> None:
        self._topic_manifests = {k for k in self._topic_manifests if k[0] != topic}

    async def _ensure_topic_manifest(self, topic: str, topic_id: str) -> None:
        """Return once the bucket's topic.json carries ``topic_id``: written through
        ``on_topic_manifest_needed`` when it does not (raises ObjectStoreError if it still
        does not; the uploader's pass is retried). Nothing to do without the hook."""
        if (topic, topic_id) in self._topic_manifests or self.on_topic_manifest_needed is None:
            return
        key = layout.topic_manifest_key(self.prefix, topic)
        async with self._topic_json_locks.hold(topic):  # after a write in flight, if any
            if (topic, topic_id) in self._topic_manifests:
                return
            try:
                found = parse_topic_manifest((await self.store.get(key))[0]).topic_id
            except (ObjectNotFoundError, ManifestFormatError):
                found = None
            if found == topic_id:
                self._topic_manifests.add((topic, topic_id))
                return
        await self.on_topic_manifest_needed(topic)
        if (topic, topic_id) not in self._topic_manifests:
            raise ObjectStoreError(key, f"topic.json of topic id {topic_id} not written yet")

    async def remove_topic_manifest(self, topic: str) -> bool:
        """Delete the topic's ``topic.json`` unless a segment object of the topic is left in
        the bucket (any partition, referenced by a manifest or not); True when it is gone.

        topic.json says how to restore or replay the topic from the bucket alone; once remote
        storage is off and every segment deleted (remote.log.delete.on.disable) there is
        nothing to restore, and a topic without remote storage has no topic.json. Run after
        the segments' deletion, so a crash in between leaves the manifest with its data. The
        partition manifests stay: they carry the log start offset and the leader epoch that
        a later ``remote.storage.enable=true`` and its fencing go on from."""
        objects = await self.store.list(layout.topic_prefix(self.prefix, topic))
        parsed = [layout.parse_key(self.prefix, o.key) for o in objects]
        if any(key is not None and key.kind == "segment" for key in parsed):
            return False
        self._forget_topic_manifest(topic)
        await self.store.delete(layout.topic_manifest_key(self.prefix, topic))
        return True

    async def record_topic_deletion(self, topic: str, topic_id: str) -> None:
        """Journal the deletion of incarnation ``topic_id`` before the metadata goes (raises
        OSError if the journal cannot be written: nothing is deleted then)."""
        await self.deleter.record(topic, topic_id)

    async def record_topic_deletions(self, deletions: list[tuple[str, str]]) -> None:
        """:meth:`record_topic_deletion` of each ``(topic, topic_id)``, in one journal write
        (the topics of one DeleteTopics request)."""
        await self.deleter.record_many(deletions)

    async def delete_topic(self, topic: str, topic_id: str | None = None) -> int:
        """Stop the topic's uploaders, then delete its objects.

        With ``topic_id`` (a deleted topic): the objects of that incarnation, in the
        background until it succeeds (topic_deletion.py); returns 0 at once and never raises
        for the bucket. Without: every object under the topic's prefix, now; returns how
        many."""
        for tp in [tp for tp in self._uploaders if tp.topic == topic]:
            await self.stop_partition(tp)
        self.reader.forget_topic(topic)
        self._forget_topic_manifest(topic)
        if topic_id is not None:
            self.deleter.schedule(topic, topic_id)
            return 0
        objects = await self.store.list(layout.topic_prefix(self.prefix, topic))
        await self.store.delete_many([o.key for o in objects])
        log.info("deleted %d objects of topic %s", len(objects), topic)
        return len(objects)

    # ---- status -------------------------------------------------------------------------

    def status(self) -> list[PartitionStatus]:
        out = []
        for tp, u in sorted(self._uploaders.items()):
            m = u.manifest
            out.append(
                PartitionStatus(
                    topic=tp.topic,
                    partition=tp.partition,
                    state=u.state,
                    leader_epoch=u.writer.leader_epoch,
                    remote_log_start_offset=m.remote_log_start_offset(),
                    remote_end_offset=m.end_offset(),
                    remote_segments=len(m.readable_segments()),
                    remote_bytes=m.size_bytes(),
                    copy_lag_segments=u.copy_lag_segments,
                    copy_lag_bytes=u.copy_lag_bytes,
                    last_error=u.last_error,
                )
            )
        return out
