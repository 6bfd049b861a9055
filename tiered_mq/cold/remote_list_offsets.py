"""Bounded waits for the bucket on the ListOffsets path (Kafka's DelayedRemoteListOffsets,
KIP-1075).

A ListOffsets by timestamp (``t >= 0``) or for the greatest timestamp (``-3``) on a tiered
partition whose data starts in the bucket reads the manifest, the remote time indexes and
segment batches (``RemoteLogManager.offset_for_timestamp`` / ``max_timestamp``).
``RemoteListOffsets.lookup`` waits for such a lookup at most the request's ``timeout_ms``
(ListOffsets v10+, when above 0) or else ``timeout_s`` (the broker config
``remote.list.offsets.request.timeout.ms``, 30 s as in Kafka). Past it, it raises
``RequestTimedOutError`` (REQUEST_TIMED_OUT, 7, retriable): the handler answers that partition
with it, offset -1 and timestamp -1, as Kafka's ``DelayedRemoteListOffsets`` does; the other
partitions of the request are answered as usual (their lookups run side by side, so a request
waits for one bound, not one per partition). The earliest (-2), latest (-1), earliest-local (-4)
and latest-tiered (-5) answers come from memory and never wait.

Invariants (those of ``RemoteFetches``, which this is an instance of):
- The lookup goes on in the background after its wait expires (Kafka cancels its job; here a
  lookup may share a chunk download or an index load with other readers, which is never
  cancelled under them); one lookup per key (partition, target, log start offset) is in flight
  at a time and a client's retry joins it, so a hung bucket holds at most one per key; the one
  that completes has warmed the manifest and index caches for the retry after it.
- A lookup that fails in time raises its error (the handler maps it to the partition's code);
  a done one is forgotten, so the next request looks up again.
- Each expiry counts in ``tiered_mq_remote_list_offsets_expired_total`` (Kafka's
  ``DelayedRemoteListOffsetsMetrics`` ExpiresPerSec); a warning names the partition at most
  once per ``remote_fetch.LOG_INTERVAL_S``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Protocol, TypeVar

from tiered_mq.cold.remote_fetch import RemoteFetches
from tiered_mq.errors import RequestTimedOutError
from tiered_mq.topic_partition import TopicPartition

T = TypeVar("T")
CONFIG = "remote.list.offsets.request.timeout.ms"


class _Counter(Protocol):
    def inc(self, amount: float = 1) -> None: ...


class RemoteListOffsets:
    def __init__(self, timeout_s: float, expired: _Counter) -> None:
        """``timeout_s``: ``remote.list.offsets.request.timeout.ms`` / 1000; ValueError
        naming the config below 1 ms."""
        self._waits = RemoteFetches(
            timeout_s,
            expired,
            config=CONFIG,
            on_expiry="answering REQUEST_TIMED_OUT, the client may retry",
        )

    @property
    def timeout_s(self) -> float:
        return self._waits.max_wait_s

    @property
    def in_flight(self) -> int:
        return self._waits.in_flight

    async def lookup(
        self,
        tp: TopicPartition,
        key: Hashable,
        find: Callable[[], Awaitable[T]],
        timeout_ms: int = 0,
    ) -> T:
        """What ``find()`` returns (None included) for ``tp``, joining the lookup in flight
        under ``key`` if any; waits ``timeout_ms`` when above 0 (the request's), else
        ``timeout_s``. Raises RequestTimedOutError past the wait, ``find``'s error before."""

        async def boxed() -> tuple[T]:
            return (await find(),)

        wait_s = timeout_ms / 1000 if timeout_ms > 0 else None
        found = await self._waits.within(tp, key, boxed, wait_s)
        if found is None:
            wait_ms = timeout_ms if timeout_ms > 0 else round(self.timeout_s * 1000)
            raise RequestTimedOutError(
                f"{tp}: the remote lookup took more than {wait_ms} ms ({CONFIG})"
            )
        return found[0]
