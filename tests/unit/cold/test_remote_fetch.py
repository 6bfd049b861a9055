"""RemoteFetches: a fetch's wait for the bucket is bounded; the read goes on, once per key."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tiered_mq.cold.remote_fetch import RemoteFetches
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)


class Count:
    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1) -> None:
        self.value += amount


class SlowRead:
    """A bucket read that finishes when the test says so."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.error: Exception | None = None

    async def __call__(self) -> str:
        self.calls += 1
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return f"data {self.calls}"


async def test_a_fast_read_is_returned() -> None:
    expired = Count()
    fetches = RemoteFetches(0.5, expired)
    read = SlowRead()
    read.release.set()
    assert await fetches.within(TP, "k", read) == "data 1"
    assert expired.value == 0
    assert fetches.in_flight == 0


async def test_a_slow_read_expires_and_goes_on_once_per_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    expired = Count()
    fetches = RemoteFetches(0.05, expired)
    read = SlowRead()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with caplog.at_level(logging.WARNING):
        assert await fetches.within(TP, "k", read) is None
        assert await fetches.within(TP, "k", read) is None  # the retry joins the read
    assert loop.time() - started < 1.0
    assert read.calls == 1 and fetches.in_flight == 1
    assert expired.value == 2
    warnings = [r for r in caplog.records if "remote.fetch.max.wait.ms (50 ms)" in r.message]
    assert len(warnings) == 1  # once per partition per LOG_INTERVAL_S
    assert "orders" in warnings[0].getMessage()

    waiting = asyncio.ensure_future(fetches.within(TP, "k", read))
    await asyncio.sleep(0)
    read.release.set()
    assert await waiting == "data 1"
    assert fetches.in_flight == 0  # forgotten once done: the next fetch reads again
    assert await fetches.within(TP, "k", read) == "data 2"


async def test_other_keys_read_on_their_own() -> None:
    fetches = RemoteFetches(0.05, Count())
    first, second = SlowRead(), SlowRead()
    second.release.set()
    assert await fetches.within(TP, "a", first) is None
    assert await fetches.within(TP, "b", second) == "data 1"
    assert fetches.in_flight == 1


async def test_a_failure_reaches_its_waiters_and_is_never_unhandled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fetches = RemoteFetches(0.05, Count())
    read = SlowRead()
    read.error = OSError("bucket unreachable")
    assert await fetches.within(TP, "k", read) is None
    read.release.set()
    await asyncio.sleep(0.01)  # fails with no waiter left: retrieved by its done callback
    assert fetches.in_flight == 0
    with pytest.raises(OSError, match="unreachable"):
        await fetches.within(TP, "k", read)
    assert "never retrieved" not in caplog.text


def test_the_wait_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"remote\.fetch\.max\.wait\.ms"):
        RemoteFetches(0, Count())
