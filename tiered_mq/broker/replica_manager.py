"""ReplicaManager: the partitions this broker hosts, keyed by TopicPartition.

Partition folders live in ``<data_dir>/{topic}-{partition}`` (Kafka's layout). The manager opens
every assigned partition at start (recovery runs in worker threads), creates and deletes them as
topics change, routes appends and reads, and wakes delayed fetches when a high watermark moves.

Seams for other parts of the broker:

- the group coordinator: ``ensure_internal_topic``, ``append_internal``, ``local_log``;
- the cold tier (``remote_log_manager``, when wired): ``on_become_leader(tp, partition)`` after
  a partition opens, and after a config change when it has no uploader yet (a compacted topic
  turned to delete), ``on_stop(tp)`` before it closes.

A background task (``_log_maintenance_routine``) rolls segments past ``segment.ms``, flushes
logs past ``flush.ms`` and, every ``log.retention.check.interval.ms``, applies retention to
topics without remote storage (the cold tier owns local retention of tiered topics), and,
every ``producer.id.expiration.check.interval.ms``, forgets the producers idle longer than
``producer.id.expiration.ms`` without an ongoing transaction (Kafka's producer expiration task,
KIP-854; the expiration is read at each check, so a dynamic change applies at the next one; a
partition also drops them when it opens, as Kafka's snapshot load does). The log cleaner
(compaction/cleaner_manager.py) runs beside it when ``log.cleaner.enable``.

Topic deletion (Kafka's LogManager.asyncDelete): each partition's log is closed and its
directory renamed ``<topic>-<partition>.<uniqueId>-delete``, durably, before the deletion is
answered; the renamed directories are removed in the background, in a worker thread (a stop
waits for the directory being removed only: the others are left to the next start). At start,
before any partition opens, ``-delete`` directories left by a failed removal or a crash are
removed the same way; they are never opened as partitions (hot/log_dir_deletion.py). Then the
stray partition directories (a topic that no longer exists, or a ``partition.metadata`` naming
another topic id: a crash between a topic's removal from the metadata and the rename, or a topic
deleted and created again) are renamed ``-delete`` and removed the same way, never opened
(stray_partitions.py). Every partition directory records its topic's id in ``partition.metadata``
before it serves a request. The partitions of one CreateTopics, all its topics (or of every topic at
start), open together in worker threads, their fsyncs grouped
(:meth:`ReplicaManager._open_locals`).

Offline partitions (Kafka's ``HostedPartition.Offline``): a partition of the metadata whose log
failed to open (a file where its directory goes, a permissions error, a log recovery refused) is
kept in :attr:`ReplicaManager.offline` with the reason, and is served by no one: requests for it
raise KAFKA_STORAGE_ERROR (:meth:`ReplicaManager.get_partition`) and Metadata answers it
LEADER_NOT_AVAILABLE with this broker among its offline replicas. It leaves that set when a later
open succeeds (the next start; in ZooKeeper mode also the next metadata change, which retries
the partitions assigned here and not hosted) or when its topic is deleted. Nothing of its
directory is changed.

Crash behaviour: nothing here is durable by itself; the logs recover their tails on open and the
producer state is rebuilt from the newest snapshot plus a replay (see partition.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tiered_mq.abandonable import AbandonedError, to_thread_abandonable
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.delayed_fetch import FetchPurgatory
from tiered_mq.broker.partition import Partition
from tiered_mq.broker.remote_disable import raise_log_starts, turned_off_with_delete
from tiered_mq.broker.stray_partitions import (
    Claims,
    claim_dirs,
    find_strays,
    record_claims,
    refuse_unidentified,
    set_aside,
)
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.coordination.base import Coordinator
from tiered_mq.errors import (
    KafkaError,
    KafkaStorageError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.hot import log_dir_deletion
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LONG_MAX, LogConfig
from tiered_mq.record.batch import iter_batches
from tiered_mq.topic_partition import TopicPartition

if TYPE_CHECKING:
    from tiered_mq.broker.topic_registry import TopicRegistry

log = logging.getLogger(__name__)

MAINTENANCE_INTERVAL_S = 1.0
# Partitions the maintenance task looks at between two turns of the event loop: a lock taken
# without waiting does not yield, so a sweep of 4,400 partitions held every request for 15-40 ms
# each second (more with every partition added).
MAINTENANCE_BATCH = 200
# Partitions a CreateTopics (or the start) opens at once: file creation waits on the file
# system's journal, so several in flight overlap the waits (_open_locals).
OPEN_WORKERS = 8
# Partitions a shutdown closes at once: closing one that took writes costs several fsyncs
# (its segments, producer snapshot, checkpoints); one after another, 2,000 such partitions
# took 53 s, past any service manager's stop timeout (the next start then recovers them).
CLOSE_WORKERS = 8


class ReplicaManager:
    def __init__(self, config: BrokerConfig, coordinator: Coordinator) -> None:
        self.config = config
        self.coordinator = coordinator
        self.partitions: dict[TopicPartition, Partition] = {}
        # in the metadata, assigned here, but their logs failed to open: partition -> why
        self.offline: dict[TopicPartition, str] = {}
        self.purgatory = FetchPurgatory()
        self.topic_registry: TopicRegistry | None = None
        self.remote_log_manager: Any = None
        self._closed = False
        self._maintenance: asyncio.Task[None] | None = None
        self._dir_removals: set[asyncio.Task[list[Path]]] = set()
        self._stopping = threading.Event()  # set by close: background removals stop early
        self.metrics_registry: Any = None  # the broker's prometheus registry (Broker sets it)
        self.on_topic_deleted: Callable[[str], None] | None = None  # (Broker: its metrics)
        self.log_cleaner: LogCleaner | None = None
        # parsed once: a bad value fails the broker start, not each produce
        self.max_decompressed_bytes = config.get_int("message.max.decompressed.bytes")

    # configuration ------------------------------------------------------------------------------
    def log_config(self, overrides: dict[str, str] | None = None) -> LogConfig:
        """Effective topic config: broker topic defaults, then the topic's own overrides."""
        props = dict(self.config.topic_defaults)
        props.update(overrides or {})
        return LogConfig.from_properties(props)

    def partition_dir(self, tp: TopicPartition) -> Path:
        return self.config.data_dir / f"{tp.topic}-{tp.partition}"

    # lifecycle ----------------------------------------------------------------------------------
    async def start(self, delete_strays: bool = True) -> None:
        """Open every partition the metadata assigns here, after removing the stray directories,
        and log how many were loaded, and recovered (a log not closed cleanly: a kill or a
        crash; its tail past the recovery point was scanned).

        With ``delete_strays`` False (a data dir whose cluster id is not recorded yet,
        meta_properties.py) a stray stops the start instead (StrayPartitionError), before any
        partition directory is opened or changed."""
        leftovers = await asyncio.to_thread(
            log_dir_deletion.leftover_delete_dirs, self.config.data_dir
        )
        self._remove_dirs(leftovers)
        strays = await asyncio.to_thread(
            find_strays,
            self.config.data_dir,
            self.coordinator.get_topic,
            self.coordinator.unreadable_topics(),
        )
        if not delete_strays:
            refuse_unidentified(strays)
        self._remove_dirs(await asyncio.to_thread(set_aside, strays))
        started = time.monotonic()
        topics: list[tuple[str, range, dict[str, str]]] = []
        for name in self.coordinator.list_topics():
            meta = self.coordinator.get_topic(name)
            if meta is not None:
                topics.extend((name, r, meta.configs) for r in self._stated(name, meta.partitions))
        # every topic in one worker-thread hop: a hop (and a pool) a topic opened 2,000 topics
        # of one partition each one at a time (3.3-5.4 s; 20 topics of 100: 1.9-2.6 s)
        _, failed = await self.open_topics(topics, abandonable=True)
        if failed:  # the start stops, naming the first (the others were opened, and are closed)
            raise next(iter(failed.values()))
        # as Kafka's LogManager says how many logs it loaded and recovered: a log whose
        # recovery point lies below its end after the open was not closed cleanly
        recovered = sum(
            p.log.recovery_point < p.log.log_end_offset for p in self.partitions.values()
        )
        log.info(
            "loaded %d partitions in %.1f s: %d recovered (not closed cleanly), %d offline",
            len(self.partitions),
            time.monotonic() - started,
            recovered,
            len(self.offline),
        )
        self._maintenance = asyncio.get_running_loop().create_task(
            self._log_maintenance_routine(), name="log-maintenance"
        )
        if self.config.get_bool("log.cleaner.enable", True):  # compacts cleanup.policy=compact
            self.log_cleaner = LogCleaner(
                lambda: self.partitions,
                backoff_ms=self.config.get_int("log.cleaner.backoff.ms"),
                dedupe_buffer_bytes=self.config.get_int("log.cleaner.dedupe.buffer.size"),
                max_decompressed_bytes=self.max_decompressed_bytes,
                registry=self.metrics_registry,
            )
            self.log_cleaner.start()

    def _stated(self, topic: str, count: int) -> list[range]:
        """The runs of ``topic``'s partitions ``0 .. count - 1`` that have a state. One without
        (ZooKeeper mode: a tool-written topic none of whose replicas was registered, so no
        leader was elected) is not hosted, even with a log here, until its state is written
        (metadata_changes.py opens it then), as Kafka's brokers host a partition only once the
        controller's LeaderAndIsr names it. The embedded coordinator writes every state."""
        state = self.coordinator.partition_state
        runs: list[range] = []
        start = None
        for p in range(count):
            if state(TopicPartition(topic, p)) is None:
                if start is not None:
                    runs.append(range(start, p))
                    start = None
            elif start is None:
                start = p
        if start is not None:
            runs.append(range(start, count))
        return runs

    async def _log_maintenance_routine(self) -> None:
        """Every second: time-based roll and flush; every retention check interval: retention;
        every producer id expiration check interval: producer id expiration. The sweep yields
        to the event loop every :data:`MAINTENANCE_BATCH` partitions."""
        interval_ms = self.config.get_int("log.retention.check.interval.ms")
        expiration_check_ms = self.config.get_int("producer.id.expiration.check.interval.ms")
        last_retention = last_expiration = time.monotonic()
        while True:
            await asyncio.sleep(MAINTENANCE_INTERVAL_S)
            now = int(time.time() * 1000)
            retention_due = (time.monotonic() - last_retention) * 1000 >= interval_ms
            if retention_due:
                last_retention = time.monotonic()
            expiration_ms: int | None = None  # None: no producer expiration this round
            if (time.monotonic() - last_expiration) * 1000 >= expiration_check_ms:
                last_expiration = time.monotonic()
                expiration_ms = self.config.get_int("producer.id.expiration.ms")
            for i, (tp, partition) in enumerate(list(self.partitions.items())):
                if i and i % MAINTENANCE_BATCH == 0:
                    await asyncio.sleep(0)  # requests waiting go first
                try:
                    await self._maintain(partition, now, retention_due, expiration_ms)
                except Exception:
                    log.exception("%s: log maintenance failed", tp)

    async def _maintain(
        self, partition: Partition, now: int, retention_due: bool, expiration_ms: int | None = None
    ) -> None:
        async with partition.lock:
            if partition.tp not in self.partitions:
                return
            log_ = partition.log
            log_.maybe_roll(now)
            if log_.config.flush_ms < LONG_MAX:
                log_.maybe_flush(now)
            rlm = self.remote_log_manager  # owns local retention of the partitions it tiers
            remote = log_.config.remote_storage_enable and (
                rlm is not None and rlm.uploader(partition.tp) is not None
            )
            if retention_due and not remote and log_.apply_retention(now):
                partition.producer_state.delete_snapshots_before(log_.local_log_start_offset)
            if expiration_ms is not None:
                partition.remove_expired_producers(now, expiration_ms)

    async def open_partitions(
        self, topic: str, indexes: range, overrides: dict[str, str], abandonable: bool = False
    ) -> list[Partition]:
        """Open (creating them if needed) the local logs of ``topic``'s partitions ``indexes``
        (:meth:`open_topics` of one topic); the first partition that failed to open is raised
        once the others are served."""
        opened, failed = await self.open_topics([(topic, indexes, overrides)], abandonable)
        if failed:
            raise next(iter(failed.values()))
        return opened

    async def open_topics(
        self, topics: list[tuple[str, range, dict[str, str]]], abandonable: bool = False
    ) -> tuple[list[Partition], dict[TopicPartition, Exception]]:
        """Open (creating them if needed) the local logs of each ``(topic, partition indexes,
        config overrides)`` of ``topics`` (the topics of one CreateTopics), all in one
        worker-thread hop (:meth:`_open_locals`): their fsyncs grouped, not a round of them a
        topic. Each directory records its topic's id (``claim_dirs``: one of another topic id
        is set aside as a stray and removed in the background). When it returns, the new
        directories, their ``partition.metadata`` and their empty segments are on disk
        (fsynced); none of them serves a request before. A partition whose log fails to open
        is recorded in :attr:`offline` and returned with its error; the others are served.
        Returns (the partitions opened, the failures).

        ``abandonable`` (the broker's start): cancelled (a stop during the start), the worker
        thread opens no partition more, and the opens in flight give up their recovery scan
        or producer state replay at its next read or batch (Partition.open: nothing changed
        that the next start would trust); this returns, cancelled, once they have ended and
        the logs opened whole are closed again (their checkpoints written: the next start
        trusts them). The partitions not reached, or given up, are opened by the next start,
        recovering them if the last stop was not clean."""
        wanted: list[tuple[TopicPartition, str | None, LogConfig]] = []
        for topic, indexes, overrides in topics:
            config = self.log_config(overrides)
            meta = self.coordinator.get_topic(topic)
            topic_id = meta.topic_id if meta is not None else None
            for i in indexes:
                tp = TopicPartition(topic, i)
                if tp not in self.partitions:
                    wanted.append((tp, topic_id, config))
        if not wanted:
            return [], {}
        states = {tp: self.coordinator.partition_state(tp) for tp, _, _ in wanted}
        items = [
            (tp, state.leader_epoch if state is not None else 0, topic_id, config)
            for (tp, topic_id, config), state in zip(wanted, states.values(), strict=True)
        ]
        try:
            if abandonable:
                strays, opened, failed = await self._open_abandonable(items)
            else:
                strays, opened, failed = await asyncio.to_thread(self._open_locals, items)
        except Exception as error:  # none of them opened
            strays, opened, failed = [], [], {tp: error for tp, _, _ in wanted}
        self._remove_dirs(strays)
        now = int(time.time() * 1000)
        expiration_ms = self.config.get_int("producer.id.expiration.ms")
        for partition in opened:
            tp = partition.tp
            partition.remove_expired_producers(now, expiration_ms)  # not shared yet: no lock
            state = states[tp]
            partition.isr = state.isr if state is not None else (self.config.node_id,)
            partition.replicas = state.replicas if state is not None else partition.isr
            partition.on_append = self.purgatory.notify
            partition.on_roll = self._on_roll
            self.partitions[tp] = partition
            self.offline.pop(tp, None)
            if self.remote_log_manager is not None:
                self.remote_log_manager.on_become_leader(tp, partition)
        for tp, exc in failed.items():
            self.offline[tp] = f"{type(exc).__name__}: {exc}"
            log.error("%s is offline: its log failed to open: %s", tp, exc)
        return opened, failed

    async def _open_abandonable(
        self, items: list[tuple[TopicPartition, int, str | None, LogConfig]]
    ) -> tuple[list[Path], list[Partition], dict[TopicPartition, Exception]]:
        """:meth:`_open_locals` in a worker thread; cancelled, the thread opens no partition
        more and this waits for the opens in flight, closes the logs they opened (their
        checkpoints written) and is cancelled (abandonable.py)."""
        return await to_thread_abandonable(
            lambda abandon: self._open_locals(items, abandon),
            lambda result: _close_all(result[1]),
        )

    def _open_locals(
        self,
        items: list[tuple[TopicPartition, int, str | None, LogConfig]],
        abandon: threading.Event | None = None,
    ) -> tuple[list[Path], list[Partition], dict[TopicPartition, Exception]]:
        """(the strays set aside; the opened partitions; the partitions whose log failed to
        open, with the error), for each (partition, leader epoch, topic id, log config) of
        ``items``. Blocking: a worker thread's.

        Steps: claim each directory (stray_partitions.claim_dirs: a stray renamed ``-delete``,
        a missing directory created) and open its log (a new one creates its empty segment and
        nothing else, unsynced: Partition.open), :data:`OPEN_WORKERS` partitions at a time;
        then record the topic ids and fsync the directories of the new logs and the data dir,
        the fsyncs of all grouped (stray_partitions.record_claims). Creating a partition costs
        no fsync of its own: the small files and directory entries of a whole CreateTopics go
        to disk together.

        Once ``abandon`` is set, the partitions not yet begun are skipped and those being
        recovered give up (Partition.open): neither opened nor returned.

        A partition whose claim or open fails (a file where its directory goes, a log that
        cannot be read) does not keep the others from opening: it is returned among the
        failures, its directory as it was.

        Crash behaviour: a crash before the last step leaves directories without
        ``partition.metadata`` (adopted by the next open) and maybe without their segment
        files (created again by the next open); nothing was served from them. When the last
        step fails the logs opened here are closed and its error raised (the next open
        retries)."""

        def open_one(
            tp: TopicPartition, epoch: int, topic_id: str | None, config: LogConfig
        ) -> tuple[Claims, Partition]:
            if abandon is not None and abandon.is_set():
                raise _NotOpenedError  # open_topics was cancelled
            dir = self.partition_dir(tp)
            claims = claim_dirs([] if topic_id is None else [(dir, topic_id)])
            new = bool(claims.created_in)  # claim_dirs created the directory: it is empty
            opened = Partition.open(
                tp, dir, config, epoch, sync_dir=False, new=new, abandon=abandon
            )
            return claims, opened

        with ThreadPoolExecutor(min(OPEN_WORKERS, len(items)), "open-partition") as pool:
            futures = [(item[0], pool.submit(open_one, *item)) for item in items]
        claims, opened = Claims([], [], set()), []
        failed: dict[TopicPartition, Exception] = {}
        for tp, future in futures:
            try:
                got, partition = future.result()
            except (_NotOpenedError, AbandonedError):
                continue
            except Exception as exc:
                failed[tp] = exc
                continue
            claims.strays.extend(got.strays)
            claims.unrecorded.extend(got.unrecorded)
            claims.created_in.update(got.created_in)
            opened.append(partition)
        try:
            new_logs = [p.log.dir for p in opened if p.log.created]
            record_claims(claims, [*new_logs, *(p.parent for p in new_logs)])
        except BaseException:
            for partition in opened:  # a stray set aside is removed at the next start
                with contextlib.suppress(Exception):
                    partition.close()
            raise
        return claims.strays, opened, failed

    def _on_roll(self, tp: TopicPartition) -> None:
        """A segment was rolled: the cold tier may upload it at once."""
        rlm = self.remote_log_manager
        if rlm is not None and hasattr(rlm, "notify_roll"):
            rlm.notify_roll(tp)

    async def delete_partitions(self, topic: str) -> None:
        """Stop hosting ``topic``'s partitions: each log is closed and its directory renamed
        for deletion (durably), then removed in the background. Every partition is tried;
        the first failed rename is raised after (KAFKA_STORAGE_ERROR), its directory left
        under its own name."""
        doomed = [tp for tp in self.partitions if tp.topic == topic]
        renamed: list[Path] = []
        failure: OSError | None = None
        if self.on_topic_deleted is not None:
            self.on_topic_deleted(topic)
        for tp in [tp for tp in self.offline if tp.topic == topic]:
            del self.offline[tp]
        for tp in doomed:
            partition = self.partitions.pop(tp)
            if self.remote_log_manager is not None:
                self.remote_log_manager.on_stop(tp)
            try:
                async with partition.lock:
                    path = await asyncio.to_thread(partition.log.delete)
            except OSError as exc:
                log.error("%s: renaming the log directory for deletion failed: %s", tp, exc)
                failure = failure or exc
            else:
                if path is not None:  # None: the directory was gone already
                    renamed.append(path)
            self.purgatory.notify(tp)
        self._remove_dirs(renamed)
        if failure is not None:
            raise failure

    def _remove_dirs(self, dirs: list[Path]) -> None:
        """Remove ``dirs`` (renamed ``-delete``) in a worker thread, in the background."""
        if not dirs:
            return
        removal = asyncio.get_running_loop().create_task(
            asyncio.to_thread(log_dir_deletion.remove_dirs, dirs, self._stopping),
            name="log-dir-deletion",
        )
        self._dir_removals.add(removal)
        removal.add_done_callback(self._dir_removals.discard)

    async def wait_for_dir_removals(self) -> None:
        """Until the background removals of deleted directories have ended."""
        while self._dir_removals:
            await asyncio.gather(*self._dir_removals, return_exceptions=True)

    async def reconfigure_topic(self, topic: str, overrides: dict[str, str]) -> None:
        """The topic's new configs for its local partitions; their uploaders run a pass at
        once (uploads start or stop, a remote log disabled with delete.on.disable goes). A
        remote storage turned off with delete.on.disable raises their log start offsets to
        the local ones, durably, before this returns (remote_disable.py). A partition without
        an uploader, as a compacted topic's is opened, gets one now if the cold tier takes it
        (a change to cleanup.policy=delete with remote.storage.enable=true tiers the topic at
        once, as in Kafka, not from the next broker start)."""
        config = self.log_config(overrides)
        rlm = self.remote_log_manager
        turned_off = False
        for tp, partition in self.partitions.items():
            if tp.topic == topic:
                turned_off |= turned_off_with_delete(topic, partition.log.config, config)
                partition.log.update_config(config)
                if rlm is not None and rlm.uploader(tp) is None:
                    rlm.on_become_leader(tp, partition)  # left alone if still untierable
                self._on_roll(tp)  # wakes the uploader
        if turned_off:
            await raise_log_starts(topic, self.partitions)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._maintenance is not None:
            self._maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._maintenance
        if self.log_cleaner is not None:
            await self.log_cleaner.close()
        # a removal in flight ends with its current directory; the others are left, renamed
        # -delete, for the next start (a stop waited for a large deleted topic's removal)
        self._stopping.set()
        await self.wait_for_dir_removals()
        workers = asyncio.Semaphore(CLOSE_WORKERS)

        async def close_one(tp: TopicPartition, partition: Partition) -> None:
            async with workers, partition.lock:
                try:
                    await asyncio.to_thread(partition.close)
                except Exception:
                    log.exception("%s: close failed", tp)

        for tp in self.partitions:
            if self.remote_log_manager is not None:
                self.remote_log_manager.on_stop(tp)
        await asyncio.gather(*(close_one(tp, p) for tp, p in list(self.partitions.items())))
        self.partitions.clear()

    # lookups ------------------------------------------------------------------------------------
    def get_partition(self, tp: TopicPartition) -> Partition:
        """The hosted partition ``tp``; KAFKA_STORAGE_ERROR for an offline one (Kafka's
        getPartitionOrException), UNKNOWN_TOPIC_OR_PARTITION for one not hosted."""
        partition = self.partitions.get(tp)
        if partition is None:
            if tp in self.offline:
                raise self.offline_error(tp)
            raise UnknownTopicOrPartitionError(f"{tp} is not hosted on this broker")
        return partition

    def offline_error(self, tp: TopicPartition) -> KafkaError:
        """The error answered for the offline partition ``tp``."""
        return KafkaStorageError(
            f"{tp} is offline: its log failed to open ({self.offline.get(tp, 'unknown')})"
        )

    def local_log(self, tp: TopicPartition) -> LocalLog:
        return self.get_partition(tp).log

    async def ensure_internal_topic(
        self, name: str, partitions: int, configs: dict[str, str]
    ) -> int:
        """Create the internal topic ``name`` with ``partitions`` unless it exists (idempotent,
        race-safe); returns its partition count, an existing topic's whatever ``partitions``
        says (as Kafka reads the count of ``__consumer_offsets`` from the topic itself)."""
        meta = self.coordinator.get_topic(name)
        if meta is not None:
            return meta.partitions
        assert self.topic_registry is not None, "topic registry not wired"
        try:
            await self.topic_registry.create_topic(name, partitions, configs, internal=True)
        except TopicAlreadyExistsError:
            meta = self.coordinator.get_topic(name)
            if meta is not None:
                return meta.partitions
        return partitions

    async def append_internal(self, tp: TopicPartition, records: bytes) -> int:
        """Append a batch built by the broker itself (group metadata); returns its base offset."""
        partition = self.get_partition(tp)
        buf = bytearray(records)
        batches = iter_batches(buf, validate=True)
        result = await partition.append_as_leader(buf, batches)
        return result.base_offset


class _NotOpenedError(Exception):
    """A partition skipped by an abandoned open (ReplicaManager._open_locals)."""


def _close_all(partitions: list[Partition]) -> None:
    """Close the logs of ``partitions`` (opened, never served), :data:`CLOSE_WORKERS` at a
    time, each on its own."""

    def close_one(partition: Partition) -> None:
        try:
            partition.close()
        except Exception:
            log.exception("%s: close failed", partition.tp)

    if partitions:
        with ThreadPoolExecutor(min(CLOSE_WORKERS, len(partitions)), "close-partition") as pool:
            list(pool.map(close_one, partitions))
