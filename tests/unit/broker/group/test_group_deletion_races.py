"""DeleteGroups racing a commit: the group is forgotten at once and its tombstones appended
after; a commit that lands on the log after those tombstones (the group created again by it)
keeps its offset, in the cache as after a restart (the log's order)."""

from __future__ import annotations

import asyncio

from tests.unit.broker.group.conftest import CONFIG, Harness, settle, spawn
from tests.unit.broker.group.fakes import FakeScheduler
from tests.unit.broker.group.test_offset_delete import SlowAppends, commit, offsets_of
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.topic_partition import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


async def test_a_commit_after_the_delete_groups_tombstones_stays() -> None:
    rm, clock = SlowAppends(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, CONFIG, clock))
    await h.coord.start()
    await commit(h, "g", {T0: 5, T1: 6})
    release = rm.hold = asyncio.Event()
    deleting = spawn(h.coord.delete_groups(["g"]))
    await settle()
    await commit(h, "g", {T0: 9})  # the group again, on the log after the tombstones
    release.set()
    assert await deleting == {"g": 0}
    assert offsets_of(h) == {T0: 9}
    assert h.coord.describe_group("g")["group_state"] == "Empty"
    h2 = await h.restart()
    assert offsets_of(h2) == {T0: 9}
    await h2.coord.close()
