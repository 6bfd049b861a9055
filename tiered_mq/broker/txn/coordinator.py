"""TransactionCoordinator: the transactional APIs of one broker (it coordinates every id).

State: one :class:`~tiered_mq.broker.txn.state.TxnMetadata` per transactional id, cached in
memory and logged to the compacted topic ``__transaction_state`` (formats in log_format.py)
before any answer or marker depends on it. The topic is created by the first transactional
InitProducerId (as in Kafka); ``start()`` replays it when it exists, then completes every
transaction caught in PrepareCommit/PrepareAbort by a crash; until then requests get
COORDINATOR_LOAD_IN_PROGRESS. A task aborts ongoing transactions older than their
``transaction.timeout.ms`` (every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``),
bumping the epoch so the late producer is fenced.

Transactional id expiration (Kafka's TransactionStateManager): every
``transaction.remove.expired.transaction.cleanup.interval.ms`` an id idle in Empty,
CompleteCommit or CompleteAbort whose last update is ``transactional.id.expiration.ms`` or more
in the past, and that no request is using (its lock free, no marker retry), is removed: a
tombstone (its key, a null value) is appended to its ``__transaction_state`` partition, the
ids of one partition together in batches of at most ``TOMBSTONE_BATCH_BYTES``, under their
locks, and only then dropped from the cache (a failed append keeps them, and the next round
tries again). The load applies tombstones, so the id is gone after a restart too; a producer
that comes back with it is a new one (InitProducerId: a new producer id, epoch 0). A request
for an id arriving during its removal waits on its lock and then finds it unknown. Locks are
per id and dropped when no request holds or awaits them, so the cache and the locks both
shrink with the ids.

Ending a transaction: log Prepare*, write a COMMIT/ABORT control batch into every partition of
the transaction (the ``__consumer_offsets`` partitions added by AddOffsetsToTxn included; right
after each of those the group coordinator materializes or drops the producer's pending
TxnOffsetCommit offsets there), log Complete*, answer. TxnOffsetCommit offsets are appended to
``__consumer_offsets`` as a transactional batch before the answer (group/txn_offsets.py), so a
crash at any step loses nothing acknowledged: on restart the group coordinator's load holds
them pending, and this coordinator re-sends the markers of every Prepare* transaction
(settling them) or aborts the still-ongoing ones at their timeout (dropping them). Each
transactional id is served under its own lock (TxnOffsetCommit's append included), so one id's
requests never interleave and no offsets land after the marker that ends their transaction.
Once Prepare* is logged the outcome is decided: a marker or the Complete* record that fails to be
written (a full disk, a partition being deleted) does not fail the request. As Kafka's
TransactionMarkerChannelManager, the coordinator retries the markers in the background (every
``MARKER_RETRY_BACKOFF_MS``, doubling up to ``MARKER_RETRY_MAX_BACKOFF_MS``) until they are all
written and Complete* is logged; meanwhile the id's EndTxn, AddPartitionsToTxn and
InitProducerId answer CONCURRENT_TRANSACTIONS (retriable), and EndTxn (or InitProducerId, when
it aborted an ongoing transaction) answers as soon as Prepare* is logged. A failed append to
``__transaction_state`` itself is answered as Kafka's TransactionStateManager maps it
(group/store_failures.py ``append_error``: a storage error is NOT_COORDINATOR, and the client
retries); nothing changes then.
Coordinator epoch: always 0 (a single coordinator); markers go through txn/markers.py, as the
WriteTxnMarkers API's do. DescribeTransactions and ListTransactions
read the cache through ``describe_txn`` and ``list_txns`` (no I/O, no lock: one event loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Protocol

from tiered_mq import errors
from tiered_mq.broker.group import log_format as group_fmt
from tiered_mq.broker.group.store_failures import append_error
from tiered_mq.broker.internal_log import load_batches
from tiered_mq.broker.txn import log_format as fmt
from tiered_mq.broker.txn import state as sm
from tiered_mq.broker.txn.markers import write_marker
from tiered_mq.broker.txn.state import TxnMetadata, TxnState
from tiered_mq.keyed_locks import KeyedLocks
from tiered_mq.periodic import schedule
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

COORDINATOR_EPOCH = 0
# a partition refusing a marker (it saw a newer producer or coordinator epoch): nothing to retry
_REFUSED = (errors.InvalidProducerEpochError, errors.TransactionCoordinatorFencedError)
LOAD_BUFFER_BYTES = 1 << 20
DEFAULT_MAX_TIMEOUT_MS = 900_000
DEFAULT_CLEANUP_INTERVAL_MS = 10_000
MARKER_RETRY_BACKOFF_MS = 200
MARKER_RETRY_MAX_BACKOFF_MS = 5_000
# bytes of tombstone keys per batch (well below message.max.bytes)
TOMBSTONE_BATCH_BYTES = 256 * 1024


class ProducerIdSource(Protocol):
    async def generate_producer_id(self) -> int: ...


def now_ms() -> int:
    return int(time.time() * 1000)


def state_name(state: TxnState) -> str:
    """The state as Kafka spells it on the wire: ``PREPARE_COMMIT`` -> ``"PrepareCommit"``."""
    return "".join(word.capitalize() for word in state.name.split("_"))


def state_from_name(name: str) -> TxnState | None:
    """The inverse of :func:`state_name` (None for a name Kafka does not know)."""
    return _STATES_BY_NAME.get(name)


_STATES_BY_NAME = {state_name(s): s for s in TxnState}


class TransactionCoordinator:
    def __init__(
        self,
        replica_manager: Any,
        config: Any,
        producer_ids: ProducerIdSource,
        group_coordinator: Any = None,
    ) -> None:
        self.rm = replica_manager
        self.producer_ids = producer_ids
        self.group_coordinator = group_coordinator
        self.num_partitions = config.get_int("transaction.state.log.num.partitions", 50)
        self.max_timeout_ms = config.get_int("transaction.max.timeout.ms", DEFAULT_MAX_TIMEOUT_MS)
        self.cleanup_interval_ms = config.get_int(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            DEFAULT_CLEANUP_INTERVAL_MS,
        )
        self.segment_bytes = config.get_int("transaction.state.log.segment.bytes", 104857600)
        self.id_expiration_ms = config.get_int("transactional.id.expiration.ms")
        self.remove_expired_interval_ms = config.get_int(
            "transaction.remove.expired.transaction.cleanup.interval.ms"
        )
        self.txns: dict[str, TxnMetadata] = {}
        self._locks = KeyedLocks[str]()  # a transactional id is in it while in use
        self.loaded = False
        self._topic_ready = False
        self._topic_lock = asyncio.Lock()
        self._expiry: asyncio.Task[None] | None = None
        self._id_expiration: asyncio.Task[None] | None = None
        self._retries: dict[str, asyncio.Task[None]] = {}  # ids whose markers are retried

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self.rm.coordinator.get_topic(fmt.TRANSACTION_STATE_TOPIC) is not None:
            await self._ensure_topic()
        for txn_id, meta in list(self.txns.items()):
            if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                async with self._locks.hold(txn_id):
                    await self._complete(meta)
        self.loaded = True
        log.info("transaction coordinator loaded %d transactional ids", len(self.txns))
        self._expiry = asyncio.get_running_loop().create_task(
            schedule(
                "aborting timed-out transactions", self.abort_expired, self.cleanup_interval_ms, log
            ),
            name="txn-timeout",
        )
        self._id_expiration = asyncio.get_running_loop().create_task(
            schedule(
                "removing expired transactional ids",
                self.remove_expired_transactional_ids,
                self.remove_expired_interval_ms,
                log,
            ),
            name="transactionalId-expiration",
        )

    async def _ensure_topic(self) -> None:
        """Create (first transactional producer, as Kafka does) and load the state topic."""
        async with self._topic_lock:
            if self._topic_ready:
                return
            # the topic's own count once it exists, as Kafka reads it from the topic:
            # transaction.state.log.num.partitions only sizes it at creation
            self.num_partitions = await self.rm.ensure_internal_topic(
                fmt.TRANSACTION_STATE_TOPIC,
                self.num_partitions,
                {"cleanup.policy": "compact", "segment.bytes": str(self.segment_bytes)},
            )
            for p in range(self.num_partitions):
                self._load_partition(TopicPartition(fmt.TRANSACTION_STATE_TOPIC, p))
            self._topic_ready = True

    async def close(self) -> None:
        tasks = [
            t for t in (self._expiry, self._id_expiration, *self._retries.values()) if t is not None
        ]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _load_partition(self, tp: TopicPartition) -> None:
        for header, records in load_batches(tp, self.rm.local_log(tp), LOAD_BUFFER_BYTES):
            if not header.is_control:
                for record in records:
                    self._apply(record.key, record.value)

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        if key is None:
            return
        try:
            txn_id = fmt.decode_key(key)
            if value is None:
                self.txns.pop(txn_id, None)
            else:
                self.txns[txn_id] = fmt.decode_value(txn_id, value)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("skipping undecodable %s record: %s", fmt.TRANSACTION_STATE_TOPIC, exc)

    def _check_loaded(self) -> None:
        if not self.loaded:
            raise errors.CoordinatorLoadInProgressError("transaction coordinator loading")

    async def _store(self, meta: TxnMetadata) -> None:
        """Log ``meta``, then make it current. A failed append changes nothing and raises the
        Kafka error the request answers (``append_error``: NOT_COORDINATOR for a storage
        error)."""
        record = (fmt.encode_key(meta.transactional_id), fmt.encode_value(meta), None, now_ms())
        tp = TopicPartition(
            fmt.TRANSACTION_STATE_TOPIC,
            fmt.partition_for(meta.transactional_id, self.num_partitions),
        )
        try:
            await self.rm.append_internal(tp, encode_batch([record]))
        except Exception as exc:
            code = append_error(exc)
            raise errors.for_code(code)(f"{tp}: {exc}") from exc
        self.txns[meta.transactional_id] = meta

    # -- completing transactions ----------------------------------------------------------

    async def _write_markers(self, meta: TxnMetadata, commit: bool) -> None:
        for tp in sorted(meta.partitions):
            try:
                await write_marker(
                    self.rm,
                    self.group_coordinator,
                    tp,
                    meta.producer_id,
                    meta.producer_epoch,
                    commit,
                    COORDINATOR_EPOCH,
                )
            except errors.UnknownTopicOrPartitionError:
                log.info("%s: partition %s is gone, no marker", meta.transactional_id, tp)
            except _REFUSED as e:
                log.warning("%s: marker refused: %s", meta.transactional_id, e)

    async def _finish(self, prepared: TxnMetadata) -> TxnMetadata:
        """Prepare* (already logged) -> markers (offsets settled) -> Complete* (logged)."""
        commit = prepared.state is TxnState.PREPARE_COMMIT
        await self._write_markers(prepared, commit)
        done = sm.complete(prepared, now_ms())
        await self._store(done)
        return done

    async def _complete(self, prepared: TxnMetadata) -> TxnMetadata:
        """:meth:`_finish` (under the id's lock); when it fails, the outcome stays decided
        (Prepare* is logged): the markers are retried in the background and the Prepare*
        metadata is returned."""
        try:
            return await self._finish(prepared)
        except Exception:
            log.warning(
                "%s: completing %s failed, retrying in the background",
                prepared.transactional_id,
                prepared.state.name,
                exc_info=True,
            )
            txn_id = prepared.transactional_id
            if txn_id not in self._retries:
                task = asyncio.get_running_loop().create_task(
                    self._retry_completion(txn_id), name=f"txn-markers-{txn_id}"
                )
                self._retries[txn_id] = task
            return self.txns.get(txn_id, prepared)

    async def _retry_completion(self, txn_id: str) -> None:
        """Write the markers of ``txn_id``'s Prepare* transaction and log Complete*, again
        until it succeeds (backing off), or the transaction is no longer Prepare*."""
        delay_ms = MARKER_RETRY_BACKOFF_MS
        try:
            while True:
                await asyncio.sleep(delay_ms / 1000.0)
                async with self._locks.hold(txn_id):
                    meta = self.txns.get(txn_id)
                    if meta is None or meta.state not in sm.PREPARING:
                        return
                    try:
                        await self._finish(meta)
                    except Exception as exc:
                        state = meta.state.name
                        log.debug("%s: completing %s failed again: %s", txn_id, state, exc)
                    else:
                        log.info("%s: %s completed on retry", txn_id, meta.state.name)
                        return
                delay_ms = min(delay_ms * 2, MARKER_RETRY_MAX_BACKOFF_MS)
        finally:
            self._retries.pop(txn_id, None)

    async def _abort_fenced(self, meta: TxnMetadata) -> TxnMetadata:
        prepared = sm.fence_and_abort(meta, now_ms())
        await self._store(prepared)
        return await self._complete(prepared)

    # -- APIs -----------------------------------------------------------------------------

    async def init_producer_id(self, txn_id: str, timeout_ms: int) -> tuple[int, int]:
        """(producer id, epoch) for a (re)starting transactional producer; raises Kafka errors."""
        self._check_loaded()
        if not txn_id:
            raise errors.InvalidRequestError("empty transactional id")
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            raise errors.InvalidTransactionTimeoutError(
                f"transaction.timeout.ms {timeout_ms} outside (0, {self.max_timeout_ms}]"
            )
        await self._ensure_topic()
        async with self._locks.hold(txn_id):
            meta = self.txns.get(txn_id)
            now = now_ms()
            if meta is None or meta.state is TxnState.DEAD:
                pid = await self.producer_ids.generate_producer_id()
                meta = TxnMetadata(txn_id, pid, 0, timeout_ms, last_update_ms=now)
            elif meta.state is TxnState.ONGOING:
                meta = await self._abort_fenced(meta)  # fences the old instance at epoch + 1
                if meta.state in sm.PREPARING:  # its markers are retried: the client retries
                    raise errors.ConcurrentTransactionsError(f"{txn_id}: aborting")
                meta = meta.replace(timeout_ms=timeout_ms, state=TxnState.EMPTY)
            else:
                meta = sm.init_existing(meta, timeout_ms, now)
            if sm.needs_new_producer_id(meta):
                pid = await self.producer_ids.generate_producer_id()
                meta = meta.replace(producer_id=pid, producer_epoch=0)
            await self._store(meta)
            return meta.producer_id, meta.producer_epoch

    def _known(self, txn_id: str) -> TxnMetadata:
        self._check_loaded()
        meta = self.txns.get(txn_id)
        if meta is None:
            raise errors.InvalidProducerIdMappingError(f"unknown transactional id {txn_id!r}")
        return meta

    async def add_partitions(
        self, txn_id: str, producer_id: int, epoch: int, partitions: Iterable[TopicPartition]
    ) -> None:
        async with self._locks.hold(txn_id):
            meta = self._known(txn_id)
            updated = sm.add_partitions(meta, producer_id, epoch, partitions, now_ms())
            if updated.partitions != meta.partitions or updated.state is not meta.state:
                await self._store(updated)

    def offsets_partition(self, group_id: str) -> TopicPartition:
        gc = self.group_coordinator
        if gc is None:
            raise errors.CoordinatorNotAvailableError("no group coordinator")
        tp: TopicPartition = gc.offsets.partition_for(group_id)
        return tp

    async def add_offsets(self, txn_id: str, producer_id: int, epoch: int, group_id: str) -> None:
        await self.add_partitions(txn_id, producer_id, epoch, [self.offsets_partition(group_id)])

    async def txn_offset_commit(
        self,
        txn_id: str,
        group_id: str,
        producer_id: int,
        epoch: int,
        offsets: dict[TopicPartition, group_fmt.OffsetValue],
        member: tuple[int, str, str | None] = (-1, "", None),
    ) -> None:
        """Append the offsets to ``__consumer_offsets`` as part of the transaction (held
        pending by the group coordinator until its marker); the group's partition must be in
        the transaction, and ``member`` ((generation, member id, instance id) of the consumer,
        TxnOffsetCommit v3+) current in the group. Under the id's lock: the transaction cannot
        end meanwhile."""
        async with self._locks.hold(txn_id):
            meta = self._known(txn_id)
            sm.check_producer(meta, producer_id, epoch)
            if meta.state is not TxnState.ONGOING or (
                self.offsets_partition(group_id) not in meta.partitions
            ):
                raise errors.InvalidTxnStateError(f"{txn_id}: offsets of {group_id} not in txn")
            await self.group_coordinator.txn_offset_commit(
                group_id, producer_id, epoch, offsets, *member
            )

    async def end_txn(self, txn_id: str, producer_id: int, epoch: int, commit: bool) -> None:
        async with self._locks.hold(txn_id):
            meta = self._known(txn_id)
            prepared = sm.end_txn(meta, producer_id, epoch, commit, now_ms())
            if prepared is None:
                return  # a retry of an end that completed
            await self._store(prepared)
            await self._complete(prepared)  # decided: answered OK even if markers are retried

    def verify_produce(self, txn_id: str, producer_id: int, epoch: int, tp: TopicPartition) -> None:
        """A transactional produce must come from the current epoch, to a partition added."""
        meta = self._known(txn_id)
        sm.check_producer(meta, producer_id, epoch)
        if meta.state is not TxnState.ONGOING or tp not in meta.partitions:
            raise errors.InvalidTxnStateError(f"{txn_id}: {tp} is not in the transaction")

    # -- admin reads (DescribeTransactions, ListTransactions) -------------------------------

    def describe_txn(self, txn_id: str) -> TxnMetadata | None:
        """The current metadata of ``txn_id``; None when unknown or Dead (Kafka answers
        TRANSACTIONAL_ID_NOT_FOUND). Raises COORDINATOR_LOAD_IN_PROGRESS until loaded."""
        self._check_loaded()
        meta = self.txns.get(txn_id)
        return None if meta is None or meta.state is TxnState.DEAD else meta

    def list_txns(self) -> list[TxnMetadata]:
        """The metadata of every known transactional id but Dead ones (being removed), by id.
        Raises COORDINATOR_LOAD_IN_PROGRESS until loaded."""
        self._check_loaded()
        return [m for _, m in sorted(self.txns.items()) if m.state is not TxnState.DEAD]

    # -- timeouts -------------------------------------------------------------------------

    async def abort_expired(self) -> list[str]:
        aborted = []
        for txn_id, meta in list(self.txns.items()):
            if not meta.expired(now_ms()):
                continue
            async with self._locks.hold(txn_id):
                meta = self.txns[txn_id]
                if meta.expired(now_ms()):
                    log.info("%s: transaction timed out, aborting", txn_id)
                    await self._abort_fenced(meta)
                    aborted.append(txn_id)
        return aborted

    # -- transactional id expiration ---------------------------------------------------------

    def _expired(self, meta: TxnMetadata | None, horizon_ms: int) -> bool:
        """Kafka's ``shouldExpire``: idle (Empty, CompleteCommit, CompleteAbort) and last
        updated at or before ``horizon_ms`` (now - ``transactional.id.expiration.ms``)."""
        return meta is not None and meta.state in sm.IDLE and meta.last_update_ms <= horizon_ms

    async def remove_expired_transactional_ids(self) -> list[str]:
        """Remove every expired transactional id no request is using (module docstring);
        return the ids removed. A partition whose tombstones cannot be appended keeps its ids
        (logged; the next round retries)."""
        if not self.loaded:
            return []
        horizon = now_ms() - self.id_expiration_ms
        by_partition: dict[int, list[str]] = defaultdict(list)
        for txn_id, meta in self.txns.items():
            if self._expired(meta, horizon) and txn_id not in self._locks:
                by_partition[fmt.partition_for(txn_id, self.num_partitions)].append(txn_id)
        removed: list[str] = []
        for partition, ids in sorted(by_partition.items()):
            tp = TopicPartition(fmt.TRANSACTION_STATE_TOPIC, partition)
            chunk: list[str] = []
            size = 0
            for txn_id in sorted(ids):
                chunk.append(txn_id)
                size += len(txn_id.encode()) + 16
                if size >= TOMBSTONE_BATCH_BYTES:
                    removed += await self._remove_ids(tp, chunk, horizon)
                    chunk, size = [], 0
            if chunk:
                removed += await self._remove_ids(tp, chunk, horizon)
        if removed:
            log.info("removed %d expired transactional id(s)", len(removed))
        return removed

    async def _remove_ids(self, tp: TopicPartition, ids: list[str], horizon: int) -> list[str]:
        """Append the tombstones of those of ``ids`` still expired and unused to ``tp``, under
        their locks, then drop them from the cache; return them ([] when the append fails)."""
        async with contextlib.AsyncExitStack() as held:
            doomed = []
            for txn_id in ids:
                if txn_id in self._locks or not self._expired(self.txns.get(txn_id), horizon):
                    continue  # a request came in meanwhile: the id is in use again
                await held.enter_async_context(self._locks.hold(txn_id))
                doomed.append(txn_id)
            if not doomed:
                return []
            now = now_ms()
            records = [(fmt.encode_key(txn_id), None, None, now) for txn_id in doomed]
            try:
                await self.rm.append_internal(tp, encode_batch(records))
            except Exception as exc:
                log.warning("%s: removing %d expired ids failed: %s", tp, len(doomed), exc)
                return []
            for txn_id in doomed:
                self.txns.pop(txn_id, None)
            return doomed
