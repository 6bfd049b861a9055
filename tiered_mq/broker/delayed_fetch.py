"""Delayed-fetch purgatory: fetches that wait for data park a future here; appends wake them.

A fetch that found fewer than ``min_bytes`` registers one future under every partition it reads
(:meth:`FetchPurgatory.watch`), then awaits it with its remaining ``max_wait_ms``. A leader append
that moves a partition's high watermark calls :meth:`FetchPurgatory.notify`, which completes every
future watching that partition; the fetch then reads again. Nothing here blocks the event loop,
and a cancelled fetch (client gone) unregisters itself in ``unwatch``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from tiered_mq.topic_partition import TopicPartition


class FetchPurgatory:
    def __init__(self) -> None:
        self._watchers: dict[TopicPartition, set[asyncio.Future[bool]]] = {}

    def watch(self, tps: Iterable[TopicPartition]) -> asyncio.Future[bool]:
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        for tp in tps:
            self._watchers.setdefault(tp, set()).add(fut)
        return fut

    def unwatch(self, fut: asyncio.Future[bool], tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            waiters = self._watchers.get(tp)
            if waiters is not None:
                waiters.discard(fut)
                if not waiters:
                    del self._watchers[tp]

    def notify(self, tp: TopicPartition) -> None:
        waiters = self._watchers.pop(tp, None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(True)

    def __len__(self) -> int:
        return sum(len(w) for w in self._watchers.values())

    async def wait(
        self,
        tps: list[TopicPartition],
        timeout_s: float,
        cut_short: asyncio.Future[None] | None = None,
    ) -> bool:
        """Wait until one of ``tps`` gets data, ``timeout_s`` passes or ``cut_short`` (the
        client's connection closing) is done; True if woken by data."""
        if timeout_s <= 0 or (cut_short is not None and cut_short.done()):
            return False
        fut = self.watch(tps)
        timer = asyncio.get_running_loop().call_later(timeout_s, _expire, fut)

        def expire_now(_: asyncio.Future[None]) -> None:
            _expire(fut)

        if cut_short is not None:
            cut_short.add_done_callback(expire_now)
        try:
            return await fut
        finally:
            timer.cancel()
            if cut_short is not None:
                cut_short.remove_done_callback(expire_now)
            self.unwatch(fut, tps)


def _expire(fut: asyncio.Future[bool]) -> None:
    if not fut.done():
        fut.set_result(False)
