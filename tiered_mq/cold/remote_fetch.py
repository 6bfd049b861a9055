"""Bounded waits for the bucket on the fetch path (Kafka's DelayedRemoteFetch, KIP-1018).

A Fetch whose offset is in the cold tier reads the bucket (``RemoteReader.read_regions``, and for
read_committed the ``.txnindex`` objects). ``RemoteFetches.within`` waits for such a read at
most ``max_wait_s`` (the broker config ``remote.fetch.max.wait.ms``, 500 ms as in Kafka). When
the bucket is slower than that (a hung or overloaded S3 endpoint: the S3 client's own read
timeout is 30 s, with retries after it), the caller gets None and answers the partition with no
records and no error, as Kafka's ``DelayedRemoteFetch.onExpiration`` does. The client fetches
again; meanwhile its connection is free for its other requests (heartbeats share it with
librdkafka, and the other partitions of the same Fetch are answered).

Invariants:
- The read goes on in the background after its wait expires; one read per key is in flight at
  a time, and a retried fetch with the same key waits for it instead of starting another, so a
  hung bucket holds at most one read per (partition, offset) however often clients retry. A
  read that completes warms the chunk cache for the retry that comes after it.
- A read that fails is raised to every caller waiting for it; once it is done it is forgotten,
  so the next fetch reads again (and gets the error, or the data once the bucket is back).
  The failure of a read nobody waits for any more is retrieved, never logged as unhandled.
- Each expiry counts in ``tiered_mq_remote_fetch_expired_total`` (Kafka's
  ``DelayedRemoteFetchMetrics`` ExpiresPerSec); a warning names the partition at most once per
  ``LOG_INTERVAL_S`` per partition, so a hung bucket shows in the log within a second.

ListOffsets bounds its bucket lookups the same way (``remote_list_offsets.py``: another
instance, its own config name, counter and wait per request).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Protocol, TypeVar

from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
T = TypeVar("T")
LOG_INTERVAL_S = 30.0


class _Counter(Protocol):
    def inc(self, amount: float = 1) -> None: ...


class RemoteFetches:
    def __init__(
        self,
        max_wait_s: float,
        expired: _Counter,
        monotonic: Callable[[], float] = time.monotonic,
        *,
        config: str = "remote.fetch.max.wait.ms",
        on_expiry: str = "answering without records, the client fetches again",
    ) -> None:
        if max_wait_s <= 0:
            raise ValueError(f"{config} must be at least 1 ms, not {max_wait_s * 1000:g}")
        self.max_wait_s = max_wait_s
        self._config = config
        self._on_expiry = on_expiry
        self._expired = expired
        self._monotonic = monotonic
        self._inflight: dict[Hashable, asyncio.Future[Any]] = {}
        self._logged: dict[TopicPartition, float] = {}

    @property
    def in_flight(self) -> int:
        return len(self._inflight)

    async def within(
        self,
        tp: TopicPartition,
        key: Hashable,
        read: Callable[[], Awaitable[T]],
        max_wait_s: float | None = None,
    ) -> T | None:
        """The result of ``read()`` for ``tp`` (the one in flight under ``key`` if any), or
        None when it takes longer than ``max_wait_s`` (this call's, else the instance's);
        its exception if it fails in time."""
        wait_s = self.max_wait_s if max_wait_s is None else max_wait_s
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(read())
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._forget(key, done))
        try:
            async with asyncio.timeout(wait_s):
                result: T = await asyncio.shield(task)
                return result
        except TimeoutError:
            self._expire(tp, wait_s)
            return None

    def _forget(self, key: Hashable, task: asyncio.Future[Any]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved: raised to its waiters, if any are left

    def _expire(self, tp: TopicPartition, wait_s: float) -> None:
        self._expired.inc()
        now = self._monotonic()
        if now - self._logged.get(tp, -LOG_INTERVAL_S) >= LOG_INTERVAL_S:
            self._logged[tp] = now
            log.warning(
                "remote read of %s has taken more than %s (%d ms): %s (%d read(s) in flight)",
                tp,
                self._config,
                round(wait_s * 1000),
                self._on_expiry,
                len(self._inflight),
            )
