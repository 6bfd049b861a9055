"""Aborted transactions of cold data, from the ``.txnindex`` objects in the bucket.

A read_committed fetch below the local log start offset needs the aborted transactions
overlapping the range it returns, also after a restart or once the local segments (and their
``.txnindex`` files) are gone. The uploader copies each segment's ``.txnindex`` (Kafka's
34-byte ``AbortedTxn`` entries, parsed by :func:`tiered_mq.hot.transaction_index
.decode_entries`) next to its ``.log``; the manifest names it under the ``txnindex`` key
(absent: the segment holds no ABORT marker).

An entry sits in the segment holding its ABORT marker, which may come after the range's end.
As in Kafka, the readable segments are scanned from the one holding ``start_offset`` on, and
the scan ends at the first entry whose ``last_stable_offset`` is at or above ``end_offset``
(every transaction begun below ``end_offset`` had ended by that marker) or at the last
segment; in-memory entries of the partition (markers still in local segments) are the
caller's to merge. Parsed objects are kept in a small LRU keyed by object key (objects are
immutable: a re-upload gets a new key). A failing store read raises; nothing is cached then.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.hot.transaction_index import AbortedTxn, decode_entries
from tiered_mq.topic_partition import TopicPartition

DEFAULT_CACHE_ENTRIES = 512


class RemoteTxnIndex:
    def __init__(
        self,
        store: ObjectStore,
        manifest: Callable[[TopicPartition], Awaitable[PartitionManifest]],
        *,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
    ) -> None:
        self.store = store
        self._manifest = manifest
        self._entries: OrderedDict[str, list[AbortedTxn]] = OrderedDict()
        self._size = max(cache_entries, 1)

    async def _load(self, key: str) -> list[AbortedTxn]:
        found = self._entries.get(key)
        if found is None:
            data, _ = await self.store.get(key)
            found = decode_entries(data)
            self._entries[key] = found
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        return found

    async def aborted_transactions(
        self, tp: TopicPartition, start_offset: int, end_offset: int
    ) -> list[AbortedTxn]:
        """Aborted transactions in the bucket overlapping [start_offset, end_offset), ordered
        by first offset."""
        if end_offset <= start_offset:
            return []
        out: list[AbortedTxn] = []
        for segment in (await self._manifest(tp)).readable_segments():
            if segment.end_offset < start_offset:
                continue
            key = segment.key(layout.TXN_INDEX)
            if key is None:
                continue
            complete = False
            for e in await self._load(key):
                if e.overlaps(start_offset, end_offset):
                    out.append(e)
                complete = complete or e.last_stable_offset >= end_offset
            if complete:
                break
        return sorted(set(out), key=lambda e: (e.first_offset, e.producer_id))
