"""Offset expiration of a Stable consumer group (Kafka's offset expiration condition): the
offsets of topics no member subscribes to expire ``offsets.retention.minutes`` after their
commit (or at an explicit OffsetCommit v2-4 expiry), those of subscribed topics never do;
during a rebalance, or with a subscription that does not decode, nothing expires."""

from __future__ import annotations

import dataclasses

from tests.unit.broker.group.conftest import CONFIG, Harness, settle
from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tests.unit.broker.group.test_membership import form_group
from tests.unit.broker.group.test_offset_delete import subscribed_group
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.broker.group.group import GroupState
from tiered_mq.topic_partition import TopicPartition

T0, U0, V0 = TopicPartition("t", 0), TopicPartition("u", 0), TopicPartition("v", 0)
MINUTE = 60_000


async def harness() -> Harness:
    config = dataclasses.replace(CONFIG, offsets_retention_minutes=1)
    rm, clock = FakeReplicaManager(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, config, clock))
    await h.coord.start()
    return h


def committed(h: Harness, group: str = "g") -> set[TopicPartition]:
    return set(h.coord.fetch_offsets(group, None)[1])


async def keep_alive(h: Harness, members: list[str], ms: int, group: str = "g") -> None:
    for _ in range(ms // 2000):
        h.clock.advance(2000)
        for member in members:
            assert h.coord.heartbeat(group, 1, member, None) == 0
    await settle()


async def test_unsubscribed_topics_offsets_expire_while_the_group_is_stable() -> None:
    h = await harness()
    joins = await subscribed_group(h, ["t", "u"])  # c0: t and u, c1: t
    members = [j["member_id"] for j in joins]
    me = members[0]
    offsets = {T0: (1, -1, ""), U0: (2, -1, ""), V0: (3, -1, "")}
    assert await h.coord.commit_offsets("g", 1, me, None, -1, offsets) == dict.fromkeys(offsets, 0)
    short = {TopicPartition("w", 0): (4, -1, ""), TopicPartition("t", 1): (5, -1, "")}
    assert await h.coord.commit_offsets("g", 1, me, None, 5000, short) == dict.fromkeys(short, 0)
    await keep_alive(h, members, 6000)
    await h.coord.expire_offsets()  # w-0's explicit expiry passed; t-1's too, but t is read
    assert committed(h) == {T0, U0, V0, TopicPartition("t", 1)}
    await keep_alive(h, members, MINUTE)
    await h.coord.expire_offsets()
    assert committed(h) == {T0, U0, TopicPartition("t", 1)}  # v: nobody subscribes
    assert h.coord.groups["g"].state is GroupState.STABLE
    h2 = Harness(h.rm, h.clock, GroupCoordinator(h.rm, h.coord.config, h.clock))
    await h.coord.close()
    await h2.coord.start()
    assert committed(h2) == {T0, U0, TopicPartition("t", 1)}  # tombstoned, not just dropped
    await h2.coord.close()


async def test_nothing_expires_during_a_rebalance_or_with_unknown_subscriptions() -> None:
    h = await harness()
    joins = await form_group(h, 1)  # b"sub-c0": not a consumer subscription
    me = joins[0]["member_id"]
    assert await h.coord.commit_offsets("g", 1, me, None, -1, {V0: (3, -1, "")}) == {V0: 0}
    await keep_alive(h, [me], 2 * MINUTE)
    await h.coord.expire_offsets()
    assert committed(h) == {V0}
    await h.start_join(client_id="late")  # PreparingRebalance until me rejoins
    assert h.coord.groups["g"].state is GroupState.PREPARING_REBALANCE
    await h.coord.expire_offsets()
    assert committed(h) == {V0}
    await h.coord.close()
