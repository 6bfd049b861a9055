"""Static membership (KIP-345) as Kafka's classic GroupCoordinator runs it, with a fake clock.

- a static member that misses a join phase stays in the group (onCompleteJoin removes only
  dynamic members), and the phase waits while only such members are left;
- a static member that restarts (JoinGroup with its instance id and no member id) takes over its
  old member id without a rebalance while the group is Stable (updateStaticMemberAndRebalance).
"""

from __future__ import annotations

from typing import Any

from tests.unit.broker.group.conftest import Harness, settle, spawn
from tiered_mq import errors
from tiered_mq.broker.group.group import GroupState
from tiered_mq.broker.group.store_failures import OFFLINE_MS

REBALANCE = errors.RebalanceInProgressError.errno
UNKNOWN_MEMBER = errors.UnknownMemberIdError.errno
FENCED = errors.FencedInstanceIdError.errno
STATIC = {"session_timeout_ms": 60_000, "rebalance_timeout_ms": 5_000}


async def static_group(h: Harness, static_first: bool = True) -> tuple[dict[str, Any], ...]:
    """A static member "s" (client s) and a dynamic member (client d), synced: Stable, gen 1.
    The first to join leads. Returns (static join, dynamic join)."""
    order = ["s", "d"] if static_first else ["d", "s"]
    tasks = {}
    for who in order:
        instance = "s" if who == "s" else None
        tasks[who] = await h.start_join(client_id=who, instance_id=instance, **STATIC)
    h.clock.advance(200)
    await settle()
    js, jd = tasks["s"].result(), tasks["d"].result()
    leader = js if js["member_id"] == js["leader"] else jd
    assignments = {m["member_id"]: m["member_id"].encode()[:1] for m in leader["members"]}
    syncs = [spawn(h.coord.sync_group("g", 1, j["member_id"], None, assignments)) for j in (js, jd)]
    await settle()
    assert [s.result()["error_code"] for s in syncs] == [0, 0]
    assert h.coord.groups["g"].state is GroupState.STABLE
    return js, jd


async def test_static_member_that_misses_a_join_phase_stays(h: Harness) -> None:
    js, jd = await static_group(h)
    s, d = js["member_id"], jd["member_id"]
    assert js["leader"] == s
    rejoin = await h.start_join(member_id=d, client_id="d", protocols=[("range", b"new")], **STATIC)
    h.clock.advance(5_000)  # the join deadline: s never rejoined
    await settle()
    answer = rejoin.result()
    group = h.coord.groups["g"]
    assert answer["generation_id"] == 2
    assert answer["leader"] == d  # the leader did not rejoin: the first member that did leads
    assert {m["member_id"] for m in answer["members"]} == {s, d}  # s is assigned to as well
    assert set(group.members) == {s, d}
    assert group.members[s].assignment == b"s"  # kept until a new assignment is stored
    got = await h.coord.sync_group("g", 2, d, None, {s: b"S2", d: b"D2"})
    assert got == {"error_code": 0, "assignment": b"D2"}
    assert group.state is GroupState.STABLE and group.members[s].assignment == b"S2"
    # Like every member of generation 2, s owes a SyncGroup: gone at the rebalance timeout.
    h.clock.advance(5_000)
    await settle()
    assert list(group.members) == [d] and group.state is GroupState.PREPARING_REBALANCE


async def test_join_phase_waits_while_only_absent_static_members_remain(h: Harness) -> None:
    js, jd = await static_group(h, static_first=False)
    s = js["member_id"]
    assert h.coord.leave_group("g", [(jd["member_id"], None)]) == (0, [0])
    group = h.coord.groups["g"]
    h.clock.advance(5_000)  # deadline: nobody rejoined, but s is static: the phase goes on
    await settle()
    assert group.state is GroupState.PREPARING_REBALANCE
    assert list(group.members) == [s] and group.generation_id == 1
    h.clock.advance(5_000)  # and again
    assert group.state is GroupState.PREPARING_REBALANCE
    rejoin = await h.start_join(member_id=s, instance_id="s", client_id="s", **STATIC)
    answer = rejoin.result()  # every member has joined: the phase ends at once
    assert (answer["generation_id"], answer["leader"]) == (2, s)


async def test_absent_static_member_leaves_at_its_session_timeout(h: Harness) -> None:
    js, jd = await static_group(h, static_first=False)
    assert h.coord.leave_group("g", [(jd["member_id"], None)]) == (0, [0])
    group = h.coord.groups["g"]
    h.clock.advance(59_000)
    assert group.state is GroupState.PREPARING_REBALANCE and js["member_id"] in group.members
    h.clock.advance(1_000)  # s's session timeout
    await settle()
    assert group.state is GroupState.EMPTY and not group.members
    assert group.generation_id == 2


async def test_static_restart_in_stable_keeps_assignment_without_rebalance(h: Harness) -> None:
    js, jd = await static_group(h)
    old, d = js["member_id"], jd["member_id"]
    group = h.coord.groups["g"]
    appends = h.rm.appends
    restart = await h.start_join(instance_id="s", client_id="s", **STATIC)
    answer = restart.result()
    new = answer["member_id"]
    assert answer["error_code"] == 0 and new != old and new.startswith("s-")
    assert answer["generation_id"] == 1
    assert answer["leader"] == old  # the old id: the restarted leader runs no assignment
    assert answer["members"] == []
    assert group.state is GroupState.STABLE and group.generation_id == 1
    assert group.leader_id == new and list(group.static_members.items()) == [("s", new)]
    assert h.rm.appends == appends + 1  # the new member id is stored
    assert h.coord.heartbeat("g", 1, d, None) == 0  # no rebalance for the other member
    assert h.coord.heartbeat("g", 1, old, "s") == FENCED
    assert await h.coord.sync_group("g", 1, new, "s", {}) == {"error_code": 0, "assignment": b"s"}
    # A coordinator restart reloads the group with the new member id.
    h2 = await h.restart()
    reloaded = h2.coord.groups["g"]
    assert set(reloaded.members) == {new, d} and reloaded.leader_id == new
    assert reloaded.members[new].assignment == b"s"
    assert h2.coord.heartbeat("g", 1, new, "s") == 0
    await h2.coord.close()


async def test_static_restart_fences_the_old_incarnation_and_rebalances_when_completing(
    h: Harness,
) -> None:
    first_d = await h.start_join(client_id="d", **STATIC)
    first_s = await h.start_join(client_id="s", instance_id="s", **STATIC)
    h.clock.advance(200)
    await settle()
    jd, js = first_d.result(), first_s.result()
    assert jd["leader"] == jd["member_id"]
    parked = spawn(h.coord.sync_group("g", 1, js["member_id"], "s", {}))  # s is a follower
    await settle()
    restart = await h.start_join(client_id="s", instance_id="s", **STATIC)
    assert parked.result() == {"error_code": FENCED, "assignment": b""}
    group = h.coord.groups["g"]
    assert group.state is GroupState.PREPARING_REBALANCE  # Kafka rebalances from Completing
    assert not restart.done()
    again = await h.start_join(member_id=jd["member_id"], client_id="d", **STATIC)
    answer = restart.result()
    assert answer["error_code"] == 0 and answer["generation_id"] == 2
    assert again.result()["generation_id"] == 2
    assert set(group.members) == {jd["member_id"], answer["member_id"]}


async def test_static_restart_during_a_join_phase_joins_it(h: Harness) -> None:
    js, jd = await static_group(h)
    newcomer = await h.start_join(client_id="n", **STATIC)  # PreparingRebalance
    restart = await h.start_join(client_id="s", instance_id="s", **STATIC)
    assert not restart.done()
    rejoin = await h.start_join(member_id=jd["member_id"], client_id="d", **STATIC)
    answers = [t.result() for t in (restart, newcomer, rejoin)]
    assert {a["generation_id"] for a in answers} == {2}
    new = answers[0]["member_id"]
    assert answers[0]["leader"] == new  # the leader's place passed to its new member id
    assert len(answers[0]["members"]) == 3
    assert h.coord.heartbeat("g", 1, js["member_id"], "s") == FENCED


async def test_static_restart_whose_store_fails_is_reverted(h: Harness) -> None:
    js, jd = await static_group(h)
    old = js["member_id"]
    h.rm.fail_appends = True
    restart = await h.start_join(instance_id="s", client_id="s", **STATIC)
    answer = restart.result()
    assert answer["error_code"] == errors.NotCoordinatorError.errno  # a storage error
    group = h.coord.groups["g"]
    assert set(group.members) == {old, jd["member_id"]} and group.leader_id == old
    assert group.static_members == {"s": old} and group.state is GroupState.STABLE
    h.rm.fail_appends = False
    h.clock.advance(OFFLINE_MS)  # the partition is offline for a while after the failure
    assert h.coord.heartbeat("g", 1, old, "s") == 0
