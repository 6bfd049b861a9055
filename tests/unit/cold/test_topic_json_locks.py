"""The per-topic lock of topic.json writes lives only while a write holds or awaits it.

A broker that creates and deletes topics for weeks (scratch topics, tests, per-job topics)
kept one asyncio.Lock per topic name it had ever written a topic.json for: memory growing
with topic churn, never given back (found by the no-restart leak soak)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tests.unit.cold.helpers import Clock
from tiered_mq.cold import layout
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.keyed_locks import KeyedLocks

PREFIX = "cluster1"


async def test_topic_churn_leaves_no_topic_json_lock_behind(tmp_path: Path) -> None:
    mem = MemoryStore.named(uuid.uuid4().hex)
    rlm = RemoteLogManager(
        ThreadedStore(mem, inline=True),
        PREFIX,
        tmp_path / "cache",
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=Clock(),
    )
    await rlm.start()
    try:
        for i in range(50):
            topic, topic_id = f"scratch-{i}", uuid.uuid4().hex
            await rlm.write_topic_manifest(topic, 4, {"retention.ms": "60000"}, topic_id)
            assert mem.get(layout.topic_manifest_key(PREFIX, topic))[0]
            await rlm.write_topic_manifest(topic, 4, {"retention.ms": "120000"}, topic_id)
            await rlm.record_topic_deletion(topic, topic_id)
            await rlm.delete_topic(topic, topic_id)
        assert len(rlm._topic_json_locks) == 0
    finally:
        await rlm.close()


async def test_a_key_is_held_by_one_task_at_a_time_and_dropped_after() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    order: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with locks.hold("orders"):
            order.append("first in")
            first_in.set()
            await release.wait()
            order.append("first out")

    async def second() -> None:
        async with locks.hold("orders"):
            order.append("second in")

    a = asyncio.create_task(first())
    await first_in.wait()
    b = asyncio.create_task(second())
    async with locks.hold("payments"):  # another key does not wait for "orders"
        order.append("payments")
    await asyncio.sleep(0)
    assert order == ["first in", "payments"]
    assert len(locks) == 1
    release.set()
    await asyncio.gather(a, b)
    assert order == ["first in", "payments", "first out", "second in"]
    assert len(locks) == 0


async def test_a_waiter_cancelled_leaves_no_lock_behind() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    holding = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("orders"):
            holding.set()
            await release.wait()

    async def waiter() -> None:
        async with locks.hold("orders"):
            raise AssertionError("a cancelled waiter never holds the lock")

    h = asyncio.create_task(holder())
    await holding.wait()
    w = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    w.cancel()
    await asyncio.gather(w, return_exceptions=True)
    assert len(locks) == 1  # still the holder's
    release.set()
    await h
    assert len(locks) == 0
