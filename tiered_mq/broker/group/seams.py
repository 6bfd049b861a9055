"""What the group coordinator needs from the rest of the broker, as Protocols.

The coordinator touches storage only through :class:`ReplicaManagerLike` (create the internal
topic, append a batch to it, read it back at start) and time only through :class:`Scheduler`,
so unit tests drive it with an in-memory log and a fake clock. :class:`LoopScheduler` is the
production scheduler: timers are ``loop.call_later`` handles on the broker's event loop (no
thread); callbacks run on the loop and must not block.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from tiered_mq.topic_partition import TopicPartition


class RegionLike(Protocol):
    def read(self) -> bytes: ...


class FetchDataLike(Protocol):
    @property
    def first_offset(self) -> int: ...

    @property
    def regions(self) -> Sequence[RegionLike]: ...

    @property
    def size(self) -> int: ...


class LocalLogLike(Protocol):
    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    def read(self, start_offset: int, max_bytes: int) -> FetchDataLike: ...


class ReplicaManagerLike(Protocol):
    async def ensure_internal_topic(
        self, name: str, partitions: int, configs: dict[str, str]
    ) -> int:
        """Create the topic unless it exists; its partition count (an existing topic's)."""
        ...

    async def append_internal(self, tp: TopicPartition, records: bytes) -> int: ...

    def local_log(self, tp: TopicPartition) -> LocalLogLike: ...


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def now_ms(self) -> int: ...

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle: ...


class LoopScheduler:
    """Wall-clock time and timers on the running asyncio loop."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000.0, callback)
