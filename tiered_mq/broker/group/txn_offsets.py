"""Offsets committed inside a transaction (TxnOffsetCommit), held until the transaction ends.

The group coordinator keeps them per producer id and group, invisible to OffsetFetch; the
transaction coordinator calls :meth:`PendingTxnOffsets.complete` when it ends the transaction:
on commit they are appended to ``__consumer_offsets`` as an ordinary commit (then visible), on
abort they are dropped. A later TxnOffsetCommit of the same partition in the same transaction
replaces the earlier one.

Crash behaviour: pending offsets live in memory only. A broker crash before the transaction
ends loses them; the coordinator then aborts the transaction (timeout) or, if it had already
decided to commit (PrepareCommit logged), completes the commit without these offsets, so the
consumer re-reads from the previous committed offsets (at-least-once for that one transaction).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from tiered_mq.broker.group import log_format as fmt
from tiered_mq.topic_partition import TopicPartition

CommitFn = Callable[[str, Mapping[TopicPartition, fmt.OffsetValue], int], Awaitable[None]]


class PendingTxnOffsets:
    def __init__(self, commit: CommitFn) -> None:
        self._commit = commit
        #: producer id -> group id -> partition -> offset
        self.pending: dict[int, dict[str, dict[TopicPartition, fmt.OffsetValue]]] = {}

    def add(
        self, producer_id: int, group_id: str, offsets: Mapping[TopicPartition, fmt.OffsetValue]
    ) -> None:
        self.pending.setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)

    def groups_of(self, producer_id: int) -> list[str]:
        return list(self.pending.get(producer_id, {}))

    async def complete(self, producer_id: int, commit: bool, now_ms: int) -> None:
        """Materialize (commit) or drop (abort) everything ``producer_id`` has pending."""
        groups = self.pending.pop(producer_id, {})
        if commit:
            for group_id, offsets in groups.items():
                await self._commit(group_id, offsets, now_ms)
