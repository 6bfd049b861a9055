"""Fakes for the group coordinator's seams: a manual clock and an in-memory internal topic."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from tiered_mq.record.batch import assign_offset_and_epoch, iter_batches
from tiered_mq.topic_partition import TopicPartition


class FakeTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeScheduler:
    """Time stands still until :meth:`advance`; due timers fire in deadline order."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now = now_ms
        self._seq = itertools.count()
        self._heap: list[tuple[int, int, FakeTimer, Callable[[], None]]] = []

    def now_ms(self) -> int:
        return self.now

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer()
        heapq.heappush(self._heap, (self.now + max(delay_ms, 0), next(self._seq), timer, callback))
        return timer

    def advance(self, ms: int) -> None:
        target = self.now + ms
        while self._heap and self._heap[0][0] <= target:
            due, _, timer, callback = heapq.heappop(self._heap)
            self.now = max(self.now, due)
            if not timer.cancelled:
                callback()
        self.now = target

    def pending(self) -> int:
        return sum(1 for _, _, t, _ in self._heap if not t.cancelled)


@dataclass
class _Region:
    data: bytes

    def read(self) -> bytes:
        return self.data


@dataclass
class _FetchData:
    first_offset: int
    regions: list[_Region]
    size: int


@dataclass
class FakeLog:
    batches: list[tuple[int, int, bytes]] = field(default_factory=list)  # (base, next, bytes)
    log_start_offset: int = 0
    log_end_offset: int = 0

    def append(self, records: bytes) -> int:
        buf = bytearray(records)
        base = self.log_end_offset
        for pos, header in iter_batches(buf):
            assign_offset_and_epoch(buf, pos, self.log_end_offset, 0)
            self.log_end_offset += header.last_offset_delta + 1
        self.batches.append((base, self.log_end_offset, bytes(buf)))
        return base

    def read(self, start_offset: int, max_bytes: int) -> _FetchData:
        """Whole batches from the one holding ``start_offset``, at least one."""
        out: list[_Region] = []
        size = 0
        for _, next_offset, data in self.batches:
            if next_offset <= start_offset:
                continue
            if out and size + len(data) > max_bytes:
                break
            out.append(_Region(data))
            size += len(data)
        return _FetchData(start_offset, out, size)


class FakeReplicaManager:
    def __init__(self) -> None:
        self.logs: dict[TopicPartition, FakeLog] = {}
        self.topics: dict[str, tuple[int, dict[str, str]]] = {}
        self.fail_appends = False
        self.append_error: Exception | None = None  # raised by every append while set
        self.appends = 0

    async def ensure_internal_topic(
        self, name: str, partitions: int, configs: dict[str, str]
    ) -> int:
        existing, _ = self.topics.setdefault(name, (partitions, configs))
        for p in range(existing):
            self.logs.setdefault(TopicPartition(name, p), FakeLog())
        return existing

    async def append_internal(self, tp: TopicPartition, records: bytes) -> int:
        if self.fail_appends:
            raise OSError("disk gone")
        if self.append_error is not None:
            raise self.append_error
        self.appends += 1
        return self.logs[tp].append(records)

    def local_log(self, tp: TopicPartition) -> FakeLog:
        return self.logs[tp]
