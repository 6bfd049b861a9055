"""Transactions in a compacted log (Kafka's cleaner rules): which transactional batches were
aborted, and which markers have no data left.

The cleaner only reads below the last stable offset, so every transactional data batch it sees
belongs to a transaction that has ended; the partition's aborted-transaction index
(``.txnindex`` entries, broker/txn/partition_txn.py) says which ones were aborted: a batch of
producer ``pid`` at offset ``o`` is aborted iff an entry of ``pid`` has
``first_offset <= o <= last_offset`` (a producer has one transaction open at a time, so its
entries never overlap). Every other transactional batch was committed.

With an :class:`AbortedTxns` the cleaner treats committed transactional records as ordinary
records (they enter the offset map, so a later committed value of a key removes older ones)
and removes the records of aborted transactions (Kafka's behaviour; an aborted offset commit
in ``__consumer_offsets`` never comes back). A control batch (marker) stays while its
transaction has data in the log (:class:`TxnMarkers`), so a loader replaying the log
(the group coordinator) still sees every surviving transactional record followed by its
marker. Without one (a partition that keeps no transaction index) the
cleaner keeps every transactional record and never lets one supersede another record.

The cleaned segment's ``.txnindex`` lists an aborted transaction only while its ABORT marker
is kept because the transaction still has a batch in the log (Kafka's
``CleanedTransactionMetadata.onControlBatchRead``): once the data are gone the entry goes in the
same pass (the marker itself stays until its delete horizon), so the index never names a
transaction whose marker the log no longer holds. A read_committed consumer drops a producer's
batches from an aborted transaction's first offset until it reads that producer's ABORT
marker; an entry without its marker would hide every later batch of the producer, committed
ones too.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.record.batch import BatchHeader


class AbortedTxns:
    """The aborted transactions of the cleaned range, by producer id and by marker."""

    def __init__(self, entries: Iterable[AbortedTxn]) -> None:
        spans: dict[int, list[tuple[int, int]]] = {}
        self._by_marker: dict[tuple[int, int], AbortedTxn] = {}
        for e in entries:
            spans.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))
            self._by_marker[(e.producer_id, e.last_offset)] = e
        self._firsts: dict[int, list[int]] = {}
        self._lasts: dict[int, list[int]] = {}
        for pid, found in spans.items():
            found.sort()
            self._firsts[pid] = [first for first, _ in found]
            self._lasts[pid] = [last for _, last in found]

    def __len__(self) -> int:
        return sum(len(firsts) for firsts in self._firsts.values())

    def is_aborted(self, producer_id: int, offset: int) -> bool:
        """Whether the transactional batch of ``producer_id`` at ``offset`` was aborted."""
        firsts = self._firsts.get(producer_id)
        if not firsts:
            return False
        i = bisect.bisect_right(firsts, offset) - 1
        return i >= 0 and offset <= self._lasts[producer_id][i]

    def ended_by(self, producer_id: int, marker_offset: int) -> AbortedTxn | None:
        """The aborted transaction whose ABORT marker is the control batch of ``producer_id`` at
        ``marker_offset`` (None: that marker is a COMMIT, or its abort is not indexed)."""
        return self._by_marker.get((producer_id, marker_offset))


@dataclass
class TxnMarkers:
    """One pass's view of transactions: the producers whose transactional data batches were
    read since their last marker (each producer has one transaction open at a time)."""

    open: set[int] = field(default_factory=set)

    def on_data(self, header: BatchHeader) -> None:
        if header.is_transactional:
            self.open.add(header.producer_id)

    def on_marker(self, header: BatchHeader) -> bool:
        """Whether the marker's transaction has no batch left (its data were read, if any,
        before it, in this pass)."""
        had_data = header.producer_id in self.open
        self.open.discard(header.producer_id)
        return not had_data
