"""Offsets committed inside a transaction (TxnOffsetCommit) that its end has not yet settled.

Durability (Kafka's design): a TxnOffsetCommit is appended to the group's ``__consumer_offsets``
partition *before* it is answered, as a transactional batch (attributes bit 4, the producer id
and epoch, base sequence -1) of ordinary offset commit records (formats in log_format.py). The
offsets are then held here, per producer id and group, invisible to OffsetFetch (a fetch with
``require_stable`` answers UNSTABLE_OFFSET_COMMIT for those partitions), until the transaction
coordinator has written the transaction's COMMIT or ABORT marker into that partition:
:meth:`PendingTxnOffsets.complete` then returns them to materialize (commit) or drops them
(abort). The marker is what makes the outcome durable: nothing is appended at completion.

Each held offset remembers the base offset of the batch that stored it (its *position*): a
committed transactional offset replaces the group's cached offset only if the cached one was
appended earlier (Kafka's ``olderThan``), so a plain OffsetCommit appended after the
TxnOffsetCommit wins, on the live path and on reload alike. A later TxnOffsetCommit of the same
partition by the same producer replaces the earlier one. A plain (non-transactional) tombstone
of a partition, appended by DeleteGroups, OffsetDelete or expiration, drops every producer's
pending offset of it appended before the tombstone (:meth:`PendingTxnOffsets.discard`, Kafka's
OffsetMetadataManager): the transaction's later COMMIT then materializes nothing there, live
and on reload alike, so a deleted group's offsets do not reappear.

Loading replays the same rules (offsets.py): transactional offset records are added here, a
marker completes the producer's pending offsets, and whatever is still pending at the end of
the log stays pending; the transaction coordinator completes those transactions (it re-sends
the markers of PrepareCommit/PrepareAbort transactions at start, and aborts ongoing ones when
they time out), which settles them here.

Not thread-safe: used on the broker's event loop only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from tiered_mq.broker.group import log_format as fmt
from tiered_mq.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class PendingOffset:
    value: fmt.OffsetValue
    position: int  # base offset of the transactional batch holding it in __consumer_offsets


#: group id -> partition -> pending offset
GroupOffsets = dict[str, dict[TopicPartition, PendingOffset]]


class PendingTxnOffsets:
    def __init__(self) -> None:
        #: producer id -> group id -> partition -> pending offset
        self.pending: dict[int, GroupOffsets] = {}

    def add(
        self,
        producer_id: int,
        group_id: str,
        offsets: Mapping[TopicPartition, fmt.OffsetValue],
        position: int,
    ) -> None:
        """Hold ``offsets`` appended in the transactional batch at ``position``."""
        held = self.pending.setdefault(producer_id, {}).setdefault(group_id, {})
        for tp, value in offsets.items():
            held[tp] = PendingOffset(value, position)

    def remove(self, producer_id: int, group_id: str, tp: TopicPartition) -> None:
        """A transactional tombstone (never written by this broker; read for Kafka's logs)."""
        groups = self.pending.get(producer_id)
        if groups is not None and group_id in groups:
            groups[group_id].pop(tp, None)

    def discard(self, group_id: str, partitions: Iterable[TopicPartition], before: int) -> None:
        """A plain tombstone of ``group_id``'s ``partitions`` appended at ``before`` (DeleteGroups,
        OffsetDelete, on the live path and on reload): every producer's pending offset of those
        partitions appended earlier goes (Kafka's OffsetMetadataManager.replay of a tombstone),
        so no COMMIT marker brings it back. One appended after the tombstone stays."""
        doomed = frozenset(partitions)
        for producer_id, groups in list(self.pending.items()):
            held = groups.get(group_id)
            if not held:
                continue
            for tp in doomed.intersection(held):
                if held[tp].position < before:
                    del held[tp]
            if not held:
                del groups[group_id]
            if not groups:
                del self.pending[producer_id]

    def groups(self) -> set[str]:
        """Groups with a pending offset (of any producer)."""
        return {g for groups in self.pending.values() for g in groups}

    def has_pending(self, group_id: str) -> bool:
        return any(group_id in groups for groups in self.pending.values())

    def unstable(self, group_id: str) -> set[TopicPartition]:
        """Partitions of ``group_id`` with a transactional offset not yet settled."""
        out: set[TopicPartition] = set()
        for groups in self.pending.values():
            out.update(groups.get(group_id, ()))
        return out

    def complete(
        self, producer_id: int, commit: bool, selected: Callable[[str], bool]
    ) -> GroupOffsets:
        """Settle ``producer_id``'s pending offsets of the groups ``selected(group_id)`` names
        (those whose ``__consumer_offsets`` partition received the marker); returns those to
        materialize (commit)."""
        groups = self.pending.get(producer_id)
        if not groups:
            self.pending.pop(producer_id, None)
            return {}
        settled = {g: offsets for g, offsets in groups.items() if selected(g)}
        for g in settled:
            del groups[g]
        if not groups:
            del self.pending[producer_id]
        return settled if commit else {}
