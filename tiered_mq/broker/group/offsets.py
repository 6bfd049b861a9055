"""Committed offsets: an in-memory cache backed by the compacted topic ``__consumer_offsets``.

Write path: a commit becomes one batch (one record per partition, key/value formats in
:mod:`log_format`) appended to the group's partition of ``__consumer_offsets`` with
``append_internal``; the cache is updated only after the append returns, so an offset a client
was told is committed is on the log. A failed append raises and leaves the cache unchanged.

Read path: fetches are answered from the cache. The cache is rebuilt at :meth:`start` by
reading every partition of the topic from its log start offset to its log end offset: the last
record per key wins, a tombstone (null value) deletes. Group metadata records are kept in
``loaded_groups`` for the coordinator to restore memberships. A record that does not decode is
logged and skipped (one bad record must not stop the broker from starting).

Retention (Kafka's KIP-211): offsets of a group expire only while the group has no members,
``offsets.retention.minutes`` after the later of their commit and the moment the group became
empty; a commit with an explicit retention (OffsetCommit v2-4) expires at commit + retention.
Expired offsets are deleted by appending tombstones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.config import OFFSETS_TOPIC, GroupConfig
from tiered_mq.broker.group.seams import ReplicaManagerLike
from tiered_mq.record.records import decode_batches, encode_batch
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

RecordPair = tuple[bytes, bytes | None]


class OffsetManager:
    def __init__(self, replica_manager: ReplicaManagerLike, config: GroupConfig) -> None:
        self._rm = replica_manager
        self._config = config
        self._offsets: dict[str, dict[TopicPartition, fmt.OffsetValue]] = {}
        self.loaded_groups: dict[str, fmt.GroupValue] = {}

    def partition_for(self, group_id: str) -> TopicPartition:
        n = self._config.offsets_topic_num_partitions
        return TopicPartition(OFFSETS_TOPIC, fmt.partition_for(group_id, n))

    # -- loading ---------------------------------------------------------------------------

    async def start(self) -> None:
        n = self._config.offsets_topic_num_partitions
        await self._rm.ensure_internal_topic(OFFSETS_TOPIC, n, self._config.topic_configs())
        for partition in range(n):
            self.load_partition(TopicPartition(OFFSETS_TOPIC, partition))

    def load_partition(self, tp: TopicPartition) -> int:
        """Replay one partition into the cache; returns the number of records applied."""
        local_log = self._rm.local_log(tp)
        offset, applied = local_log.log_start_offset, 0
        while offset < local_log.log_end_offset:
            data = local_log.read(offset, self._config.offsets_load_buffer_size)
            buf = b"".join(region.read() for region in data.regions)
            next_offset = offset
            for header, records in decode_batches(buf):
                next_offset = header.next_offset
                if header.is_control:
                    continue
                for record in records:
                    if record.key is not None:
                        applied += self._apply(record.key, record.value)
            if next_offset <= offset:
                log.error("%s: no progress reading at offset %d, stopping the load", tp, offset)
                break
            offset = next_offset
        return applied

    def _apply(self, key_bytes: bytes, value: bytes | None) -> int:
        try:
            key = fmt.decode_key(key_bytes)
            if isinstance(key, fmt.OffsetKey):
                tp = TopicPartition(key.topic, key.partition)
                if value is None:
                    group = self._offsets.get(key.group)
                    if group is not None:
                        group.pop(tp, None)
                        if not group:
                            del self._offsets[key.group]
                else:
                    self._offsets.setdefault(key.group, {})[tp] = fmt.decode_offset_value(value)
            elif value is None:
                self.loaded_groups.pop(key.group, None)
            else:
                self.loaded_groups[key.group] = fmt.decode_group_value(value)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("skipping undecodable %s record: %s", OFFSETS_TOPIC, exc)
            return 0
        return 1

    # -- reads -----------------------------------------------------------------------------

    def fetch(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, fmt.OffsetValue]:
        """Committed offsets of ``group_id`` (all of them when ``partitions`` is None)."""
        committed = self._offsets.get(group_id, {})
        if partitions is None:
            return dict(committed)
        return {tp: committed[tp] for tp in partitions if tp in committed}

    def groups(self) -> set[str]:
        """Ids of groups that have committed offsets."""
        return set(self._offsets)

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    # -- writes ----------------------------------------------------------------------------

    async def _append(self, group_id: str, records: list[RecordPair], now_ms: int) -> None:
        if records:
            batch = encode_batch([(k, v, None, now_ms) for k, v in records])
            await self._rm.append_internal(self.partition_for(group_id), batch)

    async def commit(
        self, group_id: str, offsets: Mapping[TopicPartition, fmt.OffsetValue], now_ms: int
    ) -> None:
        """Append the commit as one batch, then make it visible to fetches."""
        records: list[RecordPair] = [
            (
                fmt.encode_offset_key(fmt.OffsetKey(group_id, tp.topic, tp.partition)),
                fmt.encode_offset_value(value),
            )
            for tp, value in offsets.items()
        ]
        await self._append(group_id, records, now_ms)
        self._offsets.setdefault(group_id, {}).update(offsets)

    async def store_group(self, group_id: str, value: fmt.GroupValue, now_ms: int) -> None:
        key = fmt.encode_group_key(fmt.GroupKey(group_id))
        await self._append(group_id, [(key, fmt.encode_group_value(value))], now_ms)

    async def delete_group(self, group_id: str, now_ms: int) -> None:
        """Tombstone every offset and the group metadata of ``group_id``."""
        committed = self._offsets.get(group_id, {})
        records: list[RecordPair] = [
            (fmt.encode_offset_key(fmt.OffsetKey(group_id, tp.topic, tp.partition)), None)
            for tp in committed
        ]
        records.append((fmt.encode_group_key(fmt.GroupKey(group_id)), None))
        await self._append(group_id, records, now_ms)
        self._offsets.pop(group_id, None)
        self.loaded_groups.pop(group_id, None)

    async def expire_offsets(
        self, now_ms: int, empty_since: Callable[[str], int | None]
    ) -> list[str]:
        """Tombstone expired offsets; returns the groups left with no offsets.

        ``empty_since(group)`` is when the group became empty (-1 if unknown), None while it has
        members (its offsets never expire then).
        """
        emptied: list[str] = []
        retention = self._config.offsets_retention_ms
        for group_id in list(self._offsets):
            since = empty_since(group_id)
            if since is None:
                continue
            committed = self._offsets[group_id]
            expired = [
                tp
                for tp, v in committed.items()
                if (
                    now_ms >= v.expire_timestamp
                    if v.expire_timestamp >= 0
                    else now_ms >= max(v.commit_timestamp, since) + retention
                )
            ]
            if not expired:
                continue
            records: list[RecordPair] = [
                (fmt.encode_offset_key(fmt.OffsetKey(group_id, tp.topic, tp.partition)), None)
                for tp in expired
            ]
            await self._append(group_id, records, now_ms)
            for tp in expired:
                committed.pop(tp, None)
            if not committed:
                del self._offsets[group_id]
                emptied.append(group_id)
            log.info("group %s: expired offsets of %d partitions", group_id, len(expired))
        return emptied
