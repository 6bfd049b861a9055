"""``group.max.size`` (Kafka's acceptJoiningMember): a JoinGroup that would take a group beyond
it is answered GROUP_MAX_SIZE_REACHED with no member id, and the member refused is out of the
group; a group loaded with more members than the maximum rebalances down to it."""

from __future__ import annotations

import dataclasses

from tests.unit.broker.group.conftest import CONFIG, Harness, settle
from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.broker.group.group import GroupState

FULL = errors.GroupMaxSizeReachedError.errno
REBALANCE = errors.RebalanceInProgressError.errno


async def harness(max_size: int, rm: FakeReplicaManager | None = None) -> Harness:
    config = dataclasses.replace(CONFIG, group_max_size=max_size)
    rm, clock = rm or FakeReplicaManager(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, config, clock))
    await h.coord.start()
    return h


async def test_a_full_stable_group_refuses_a_new_member_without_a_rebalance() -> None:
    h = await harness(2)
    joins = await form_group(h, 2)
    refused = (await h.start_join(client_id="third")).result()
    assert (refused["error_code"], refused["member_id"]) == (FULL, "")
    pending = (await h.start_join(client_id="fourth", require_known_member_id=True)).result()
    assert (pending["error_code"], pending["member_id"]) == (FULL, "")
    group = h.coord.groups["g"]
    assert group.state is GroupState.STABLE and group.generation_id == 1
    assert set(group.members) == {j["member_id"] for j in joins}
    assert not group.pending_members
    await h.coord.close()


async def test_members_beyond_the_maximum_are_refused_in_the_join_phase() -> None:
    h = await harness(2)
    tasks = [await h.start_join(client_id=f"c{i}") for i in range(4)]  # within the delay
    assert [t.result()["error_code"] for t in tasks[2:]] == [FULL, FULL]
    h.clock.advance(300)
    await settle()
    joined = [t.result() for t in tasks[:2]]
    assert [j["error_code"] for j in joined] == [0, 0]
    assert len(h.coord.groups["g"].members) == 2
    await h.coord.close()


async def test_a_refused_pending_member_does_not_hold_the_join_phase() -> None:
    h = await harness(2)
    (a,) = await form_group(h, 1)
    pending = (await h.start_join(client_id="x", require_known_member_id=True)).result()
    assert pending["error_code"] == errors.MemberIdRequiredError.errno  # 1 of 2: accepted
    y = await h.start_join(client_id="y")  # a rebalance: y waits for a
    a_again = await h.start_join(member_id=a["member_id"])
    assert not a_again.done()  # the join phase waits for the pending member
    x = await h.start_join(member_id=pending["member_id"], require_known_member_id=True)
    assert x.result()["error_code"] == FULL  # a and y have a JoinGroup parked: full
    await settle()
    assert a_again.result()["generation_id"] == y.result()["generation_id"] == 2
    assert not h.coord.groups["g"].pending_members
    await h.coord.close()


async def test_a_group_loaded_over_the_maximum_rebalances_down_to_it() -> None:
    big = await harness(10)
    joins = await form_group(big, 3)
    await big.coord.close()
    h = await harness(2, big.rm)
    group = h.coord.groups["g"]
    assert group.state is GroupState.PREPARING_REBALANCE
    ids = [j["member_id"] for j in joins]
    assert h.coord.heartbeat("g", 1, ids[2], None) == REBALANCE
    rejoins = [await h.start_join(member_id=mid) for mid in ids]
    assert rejoins[2].result()["error_code"] == FULL  # the third to rejoin is left out
    await settle()
    answers = [r.result() for r in rejoins[:2]]
    assert [a["generation_id"] for a in answers] == [2, 2]  # at once: both others rejoined
    assert set(group.members) == set(ids[:2])
    await h.coord.close()
