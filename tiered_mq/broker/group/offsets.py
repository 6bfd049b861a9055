"""Committed offsets: an in-memory cache backed by the compacted topic ``__consumer_offsets``.

A group's partition is ``abs(java hashCode(group id)) % N``, N the partition count of the
topic as it exists (``offsets.topic.num.partitions`` only when :meth:`start` creates it; a
changed setting would otherwise map every group to another partition and lose its offsets).

Write path: a commit becomes one batch (one record per partition, key/value formats in
:mod:`log_format`) appended to the group's partition of ``__consumer_offsets`` with
``append_internal``; the cache is updated only after the append returns, so an offset a client
was told is committed is on the log. A failed append raises and leaves the cache unchanged; a
storage failure also takes the partition offline for a while (:attr:`OffsetManager.offline`,
see store_failures.py).

Transactional offsets (TxnOffsetCommit, :meth:`commit_txn`): appended as a transactional batch
(producer id, epoch, base sequence -1) and held in :attr:`OffsetManager.pending` until the
transaction's COMMIT/ABORT marker is in the partition; :meth:`complete_txn` then materializes or
drops them (rules and crash behaviour in txn_offsets.py).

Read path: fetches are answered from the cache. The cache is rebuilt at :meth:`start` by
reading every partition of the topic from its log start offset to its log end offset: the last
record per key wins, a tombstone (null value) deletes. Records of a transactional batch are
held pending per producer id; a control batch (marker) of that producer settles them (COMMIT:
applied unless the cached offset was appended later; ABORT: dropped); those still pending at
the end of the log stay pending. Group metadata records are kept in ``loaded_groups`` for the
coordinator to restore memberships. A record that does not decode is logged and skipped (one
bad record must not stop the broker from starting).

The cache keeps, per offset, the base offset of the batch that stored it (its position), so
an append that completes after a later one never overwrites it.

Retention (Kafka's KIP-211 and its offset expiration condition): the coordinator says per
group whether its offsets may expire and which topics are exempt (:class:`ExpiryRule`). An
empty group's offsets expire ``offsets.retention.minutes`` after the later of their commit and
the moment the group became empty; while a ``consumer`` group with members is Stable, the
offsets of topics none of its members subscribes to expire that long after their commit (those
of subscribed topics never do); in any other state nothing expires. A commit with an explicit
retention (OffsetCommit v2-4) expires at commit + retention instead, under the same rule.
Expired offsets are deleted by appending tombstones.

Deletion (OffsetDelete, expiration; DeleteGroups adds the group's own tombstone): one batch of
tombstones (offset key, null value) on the group's partition, and only then does the cache drop
the offsets. :meth:`delete_offsets` and :meth:`delete_group` keep an offset that a commit
appended after the tombstones has put in the cache meanwhile (the log's order decides, as on
reload). A tombstone is durable once appended, so an acknowledged deletion does not come back
after a restart; a crash before the append leaves the offsets in place. A tombstone also drops
the pending transactional offsets of its partition appended before it (txn_offsets.py), on the
live path and on reload, as Kafka's OffsetMetadataManager replays one; DeleteGroups tombstones
the partitions that only have a pending offset too (Kafka's deleteAllOffsets), so the
transaction's COMMIT brings none of the deleted group's offsets back. Expiration skips a
partition with a pending transactional offset (Kafka: not expired yet).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.config import OFFSETS_TOPIC, GroupConfig
from tiered_mq.broker.group.seams import ReplicaManagerLike
from tiered_mq.broker.group.store_failures import STORAGE_ERRORS, OfflinePartitions
from tiered_mq.broker.group.txn_offsets import GroupOffsets, PendingTxnOffsets
from tiered_mq.broker.internal_log import load_batches
from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.control import ControlType, decode_control_record
from tiered_mq.record.records import Record, encode_batch
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

RecordPair = tuple[bytes, bytes | None]


@dataclass(frozen=True, slots=True)
class ExpiryRule:
    """How a group's offsets may expire now: ``since`` is when the group became empty (-1: the
    commit alone is the base); the offsets of ``kept_topics`` never expire."""

    since: int = -1
    kept_topics: frozenset[str] = frozenset()


class OffsetManager:
    def __init__(self, replica_manager: ReplicaManagerLike, config: GroupConfig) -> None:
        self._rm = replica_manager
        self._config = config
        # the partition count of __consumer_offsets: the config's until start() reads the
        # topic's own (which wins, as in Kafka, so offsets.topic.num.partitions changed after
        # the topic exists does not move the groups to other partitions)
        self._partitions = config.offsets_topic_num_partitions
        self._offsets: dict[str, dict[TopicPartition, fmt.OffsetValue]] = {}
        self._positions: dict[str, dict[TopicPartition, int]] = {}  # same keys as _offsets
        # topic -> group -> how many of the topic's partitions the group has in _offsets: a
        # deleted topic's offsets are found without a scan of every group's (Kafka's
        # onPartitionsDeleted looks up the deleted partitions in each group)
        self._topic_groups: dict[str, dict[str, int]] = {}
        self.pending = PendingTxnOffsets()
        self.loaded_groups: dict[str, fmt.GroupValue] = {}
        self.offline = OfflinePartitions(log)  # partitions whose storage failed, for a while

    def partition_for(self, group_id: str) -> TopicPartition:
        return TopicPartition(OFFSETS_TOPIC, fmt.partition_for(group_id, self._partitions))

    # -- loading ---------------------------------------------------------------------------

    async def start(self) -> None:
        wanted = self._config.offsets_topic_num_partitions
        configs = self._config.topic_configs()
        n = await self._rm.ensure_internal_topic(OFFSETS_TOPIC, wanted, configs)
        if n != wanted:
            log.warning(
                "%s has %d partitions, offsets.topic.num.partitions says %d: the topic's count "
                "is used (it cannot change once the topic exists)",
                OFFSETS_TOPIC,
                n,
                wanted,
            )
        self._partitions = n
        for partition in range(n):
            self.load_partition(TopicPartition(OFFSETS_TOPIC, partition))

    def load_partition(self, tp: TopicPartition) -> int:
        """Replay one partition into the cache; returns the number of records applied."""
        applied = 0
        local_log = self._rm.local_log(tp)
        for header, records in load_batches(tp, local_log, self._config.offsets_load_buffer_size):
            if header.is_control:
                self._load_marker(tp, header.producer_id, records)
                continue
            pid = header.producer_id if header.is_transactional else None
            for record in records:
                if record.key is not None:
                    applied += self._apply(record.key, record.value, header.base_offset, pid)
        return applied

    def _load_marker(self, tp: TopicPartition, producer_id: int, records: list[Record]) -> None:
        try:
            marker = decode_control_record(records[0]).type if records else ControlType.UNKNOWN
        except CorruptRecordError as exc:
            log.warning("%s: skipping undecodable transaction marker: %s", tp, exc)
            return
        if marker is not ControlType.UNKNOWN:
            self.complete_txn(producer_id, marker is ControlType.COMMIT, tp.partition)

    def _apply(self, key_bytes: bytes, value: bytes | None, position: int, pid: int | None) -> int:
        try:
            key = fmt.decode_key(key_bytes)
            if isinstance(key, fmt.OffsetKey):
                tp = TopicPartition(key.topic, key.partition)
                if pid is not None:  # a TxnOffsetCommit: pending until its marker
                    if value is None:
                        self.pending.remove(pid, key.group, tp)
                    else:
                        offset = fmt.decode_offset_value(value)
                        self.pending.add(pid, key.group, {tp: offset}, position)
                elif value is None:
                    self._delete(key.group, tp)
                    self.pending.discard(key.group, (tp,), position)
                else:
                    self._set(key.group, tp, fmt.decode_offset_value(value), position)
            elif value is None:
                self.loaded_groups.pop(key.group, None)
            else:
                self.loaded_groups[key.group] = fmt.decode_group_value(value)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("skipping undecodable %s record: %s", OFFSETS_TOPIC, exc)
            return 0
        return 1

    def _set(self, group_id: str, tp: TopicPartition, value: fmt.OffsetValue, pos: int) -> bool:
        """Cache ``value`` unless the cached offset was appended after ``pos``."""
        positions = self._positions.setdefault(group_id, {})
        if positions.get(tp, -1) > pos:
            return False
        positions[tp] = pos
        group = self._offsets.setdefault(group_id, {})
        if tp not in group:
            counts = self._topic_groups.setdefault(tp.topic, {})
            counts[group_id] = counts.get(group_id, 0) + 1
        group[tp] = value
        return True

    def _delete(self, group_id: str, tp: TopicPartition) -> None:
        group = self._offsets.get(group_id)
        if group is not None:
            if group.pop(tp, None) is not None:
                self._uncount(group_id, tp.topic)
            self._positions[group_id].pop(tp, None)
            if not group:
                del self._offsets[group_id]
                del self._positions[group_id]

    def _uncount(self, group_id: str, topic: str, partitions: int = 1) -> None:
        counts = self._topic_groups[topic]
        counts[group_id] -= partitions
        if not counts[group_id]:
            del counts[group_id]
            if not counts:
                del self._topic_groups[topic]

    # -- reads -----------------------------------------------------------------------------

    def fetch(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, fmt.OffsetValue]:
        """Committed offsets of ``group_id`` (all of them when ``partitions`` is None)."""
        committed = self._offsets.get(group_id, {})
        if partitions is None:
            return dict(committed)
        return {tp: committed[tp] for tp in partitions if tp in committed}

    def topic_offsets(self, topic: str) -> dict[str, list[TopicPartition]]:
        """Group id -> its partitions of ``topic`` with a committed offset, for every group
        with one; groups in order of id."""
        groups = sorted(self._topic_groups.get(topic, ()))
        return {g: [tp for tp in self._offsets[g] if tp.topic == topic] for g in groups}

    def groups(self) -> set[str]:
        """Ids of groups that have committed or pending transactional offsets."""
        return set(self._offsets) | self.pending.groups()

    def has_offsets(self, group_id: str) -> bool:
        """Committed or pending transactional offsets (Kafka's ``hasOffsets``)."""
        return bool(self._offsets.get(group_id)) or self.pending.has_pending(group_id)

    # -- writes ----------------------------------------------------------------------------

    async def _append(
        self, group_id: str, records: list[RecordPair], now_ms: int, txn: tuple[int, int] = (-1, -1)
    ) -> int:
        """Append ``records`` as one batch (transactional for ``txn`` = (producer id, epoch));
        returns its base offset (-1: nothing to append)."""
        if not records:
            return -1
        pid, epoch = txn
        batch = encode_batch(
            [(k, v, None, now_ms) for k, v in records],
            producer_id=pid,
            producer_epoch=epoch,
            is_transactional=pid >= 0,
        )
        tp = self.partition_for(group_id)
        try:
            position = await self._rm.append_internal(tp, batch)
        except STORAGE_ERRORS:
            self.offline.failed(tp.partition, now_ms)
            raise
        self.offline.succeeded(tp.partition)
        return position

    @staticmethod
    def _tombstones(group_id: str, partitions: Iterable[TopicPartition]) -> list[RecordPair]:
        return [
            (fmt.encode_offset_key(fmt.OffsetKey(group_id, tp.topic, tp.partition)), None)
            for tp in partitions
        ]

    def _drop_before(
        self, group_id: str, partitions: Iterable[TopicPartition], position: int
    ) -> None:
        """Drop cached offsets appended before ``position`` (a later commit stays)."""
        positions = self._positions.get(group_id, {})
        for tp in partitions:
            if positions.get(tp, position) < position:
                self._delete(group_id, tp)

    @staticmethod
    def _commit_records(
        group_id: str, offsets: Mapping[TopicPartition, fmt.OffsetValue]
    ) -> list[RecordPair]:
        return [
            (
                fmt.encode_offset_key(fmt.OffsetKey(group_id, tp.topic, tp.partition)),
                fmt.encode_offset_value(value),
            )
            for tp, value in offsets.items()
        ]

    async def commit(
        self, group_id: str, offsets: Mapping[TopicPartition, fmt.OffsetValue], now_ms: int
    ) -> None:
        """Append the commit as one batch, then make it visible to fetches."""
        position = await self._append(group_id, self._commit_records(group_id, offsets), now_ms)
        for tp, value in offsets.items():
            self._set(group_id, tp, value, position)

    async def commit_txn(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: Mapping[TopicPartition, fmt.OffsetValue],
        now_ms: int,
    ) -> None:
        """TxnOffsetCommit: append a transactional batch, then hold the offsets pending."""
        records = self._commit_records(group_id, offsets)
        position = await self._append(group_id, records, now_ms, (producer_id, producer_epoch))
        if position >= 0:
            self.pending.add(producer_id, group_id, offsets, position)

    def complete_txn(self, producer_id: int, commit: bool, partition: int) -> int:
        """A COMMIT/ABORT marker of ``producer_id`` is in ``__consumer_offsets`` ``partition``:
        settle its pending offsets there; returns how many were applied to the cache."""
        n = self._partitions
        settled: GroupOffsets = self.pending.complete(
            producer_id, commit, lambda g: fmt.partition_for(g, n) == partition
        )
        applied = 0
        for group_id, offsets in settled.items():
            for tp, held in offsets.items():
                applied += self._set(group_id, tp, held.value, held.position)
        return applied

    async def store_group(self, group_id: str, value: fmt.GroupValue, now_ms: int) -> None:
        key = fmt.encode_group_key(fmt.GroupKey(group_id))
        await self._append(group_id, [(key, fmt.encode_group_value(value))], now_ms)

    async def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], now_ms: int
    ) -> list[TopicPartition]:
        """Tombstone the committed offsets of ``partitions`` in one batch, then drop them from
        the cache; returns the partitions that had one (a failed append raises, nothing
        changes)."""
        committed = self._offsets.get(group_id, {})
        deleted = [tp for tp in dict.fromkeys(partitions) if tp in committed]
        position = await self._append(group_id, self._tombstones(group_id, deleted), now_ms)
        self._drop_before(group_id, deleted, position)
        if position >= 0:
            self.pending.discard(group_id, deleted, position)
        return deleted

    async def delete_group(self, group_id: str, now_ms: int) -> None:
        """Tombstone every offset, pending transactional ones included, and the group metadata
        of ``group_id``, then drop them from the cache and the pending offsets; one a commit
        appended after the tombstones (the group created again meanwhile) stays, as on
        reload."""
        doomed = list(self._offsets.get(group_id, {}))
        doomed += sorted(self.pending.unstable(group_id).difference(doomed))
        records = self._tombstones(group_id, doomed)
        records.append((fmt.encode_group_key(fmt.GroupKey(group_id)), None))
        position = await self._append(group_id, records, now_ms)
        self._drop_before(group_id, doomed, position)
        self.pending.discard(group_id, doomed, position)
        self.loaded_groups.pop(group_id, None)

    async def expire_offsets(
        self, now_ms: int, rule_of: Callable[[str], ExpiryRule | None]
    ) -> list[str]:
        """Tombstone expired offsets; returns the groups left with no offsets.

        ``rule_of(group)`` is the group's :class:`ExpiryRule`, None while none of its offsets
        may expire (see the module docstring).
        """
        emptied: list[str] = []
        retention = self._config.offsets_retention_ms
        for group_id in list(self._offsets):
            rule = rule_of(group_id)
            if rule is None:
                continue
            committed = self._offsets[group_id]
            pending = self.pending.unstable(group_id)
            expired = [
                tp
                for tp, v in committed.items()
                if tp.topic not in rule.kept_topics
                and tp not in pending
                and (
                    now_ms >= v.expire_timestamp
                    if v.expire_timestamp >= 0
                    else now_ms >= max(v.commit_timestamp, rule.since) + retention
                )
            ]
            if not expired:
                continue
            await self.delete_offsets(group_id, expired, now_ms)
            if group_id not in self._offsets:
                emptied.append(group_id)
            log.info("group %s: expired offsets of %d partitions", group_id, len(expired))
        return emptied
