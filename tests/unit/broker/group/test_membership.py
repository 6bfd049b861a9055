"""The classic rebalance protocol driven with a fake clock."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.unit.broker.group.conftest import Harness, settle, spawn
from tiered_mq import errors
from tiered_mq.broker.group.group import GroupState

REBALANCE = errors.RebalanceInProgressError.errno
UNKNOWN_MEMBER = errors.UnknownMemberIdError.errno
ILLEGAL_GENERATION = errors.IllegalGenerationError.errno


async def form_group(h: Harness, n: int) -> list[dict[str, Any]]:
    """n members join within the initial delay and sync; returns their join answers."""
    tasks = [await h.start_join(client_id=f"c{i}") for i in range(n)]
    assert not any(t.done() for t in tasks)
    h.clock.advance(100)  # initial rebalance delay; members arrived meanwhile: one more
    await settle()
    assert n == 1 or not any(t.done() for t in tasks)
    h.clock.advance(100)
    await settle()
    joins = [t.result() for t in tasks]
    leader = joins[0]["leader"]
    syncs = []
    for j in joins:
        assignments = {m["member_id"]: m["member_id"].encode() for m in j["members"]}
        syncs.append(
            spawn(h.coord.sync_group("g", j["generation_id"], j["member_id"], None, assignments))
        )
    await settle()
    for j, s in zip(joins, syncs, strict=True):
        assert s.result() == {"error_code": 0, "assignment": j["member_id"].encode()}
    assert h.coord.groups["g"].state is GroupState.STABLE
    assert sum(j["member_id"] == leader for j in joins) == 1
    return joins


async def test_three_members_form_one_generation(h: Harness) -> None:
    joins = await form_group(h, 3)
    assert {j["generation_id"] for j in joins} == {1}
    assert {j["protocol_name"] for j in joins} == {"range"}
    leader = next(j for j in joins if j["member_id"] == j["leader"])
    assert {m["member_id"] for m in leader["members"]} == {j["member_id"] for j in joins}
    assert sorted(m["metadata"] for m in leader["members"]) == [b"sub-c0", b"sub-c1", b"sub-c2"]
    assert all(j["members"] == [] for j in joins if j is not leader)
    for j in joins:
        assert h.coord.heartbeat("g", 1, j["member_id"], None) == 0


async def test_initial_delay_extends_while_members_arrive(h: Harness) -> None:
    first = await h.start_join(client_id="a")
    h.clock.advance(90)
    second = await h.start_join(client_id="b")
    h.clock.advance(10)  # first delay ends, but a member arrived: wait another delay
    await settle()
    assert not first.done()
    h.clock.advance(100)
    await settle()
    assert first.result()["generation_id"] == second.result()["generation_id"] == 1


async def two_joined(h: Harness) -> tuple[dict[str, Any], dict[str, Any]]:
    """Members "a" and "b" through the first join phase: (leader's, follower's) JoinGroup."""
    a, b = await h.start_join(client_id="a"), await h.start_join(client_id="b")
    h.clock.advance(200)
    await settle()
    ja, jb = a.result(), b.result()
    return (ja, jb) if ja["member_id"] == ja["leader"] else (jb, ja)


async def test_followers_wait_for_the_leaders_sync(h: Harness) -> None:
    leader, follower = await two_joined(h)
    parked = spawn(h.coord.sync_group("g", 1, follower["member_id"], None, {}))
    await settle()
    assert not parked.done()
    assert h.coord.heartbeat("g", 1, follower["member_id"], None) == 0  # CompletingRebalance
    got = await h.coord.sync_group("g", 1, leader["member_id"], None, {follower["member_id"]: b"F"})
    await settle()
    assert got == {"error_code": 0, "assignment": b""}  # the leader left itself out
    assert parked.result() == {"error_code": 0, "assignment": b"F"}
    # The assignment was persisted to __consumer_offsets before anyone was answered.
    assert h.rm.appends >= 1


async def test_member_id_required_then_join(h: Harness) -> None:
    first = await h.start_join(require_known_member_id=True)
    answer = first.result()
    assert answer["error_code"] == errors.MemberIdRequiredError.errno
    assert answer["member_id"].startswith("c-")
    again = await h.start_join(member_id=answer["member_id"], require_known_member_id=True)
    h.clock.advance(200)
    await settle()
    assert again.result()["error_code"] == 0
    assert again.result()["member_id"] == answer["member_id"]


async def test_pending_member_that_never_returns_expires(h: Harness) -> None:
    joins = await form_group(h, 1)
    pending = (await h.start_join(require_known_member_id=True)).result()["member_id"]
    # Leader rejoins (a rebalance); the pending member holds the join phase until it expires.
    rejoin = await h.start_join(member_id=joins[0]["member_id"])
    h.clock.advance(5_000)
    await settle()
    assert not rejoin.done()
    h.clock.advance(5_000)  # pending member's session timeout
    await settle()
    assert rejoin.result()["generation_id"] == 2
    assert pending not in h.coord.groups["g"].members


async def test_session_timeout_removes_member_and_rebalances(h: Harness) -> None:
    joins = await form_group(h, 2)
    alive, dead = joins[0]["member_id"], joins[1]["member_id"]
    for _ in range(4):  # alive keeps heartbeating, dead is silent
        h.clock.advance(3000)
        assert h.coord.heartbeat("g", 1, alive, None) in (0, REBALANCE)
    assert h.coord.groups["g"].state is GroupState.PREPARING_REBALANCE
    assert dead not in h.coord.groups["g"].members
    assert h.coord.heartbeat("g", 1, alive, None) == REBALANCE
    assert h.coord.heartbeat("g", 1, dead, None) == UNKNOWN_MEMBER
    rejoin = await h.start_join(member_id=alive)  # all known members joined: completes now
    answer = rejoin.result()
    assert answer["generation_id"] == 2
    assert answer["leader"] == alive
    assert [m["member_id"] for m in answer["members"]] == [alive]


async def test_member_that_does_not_rejoin_is_dropped_at_the_deadline(h: Harness) -> None:
    joins = await form_group(h, 2)
    a, b = joins[0]["member_id"], joins[1]["member_id"]
    rejoin = await h.start_join(member_id=a, protocols=[("range", b"new")])  # triggers rebalance
    for _ in range(12):  # b heartbeats (REBALANCE_IN_PROGRESS) but never rejoins
        h.clock.advance(2500)
        await settle()
        if not rejoin.done():
            assert h.coord.heartbeat("g", 1, b, None) == REBALANCE
    answer = rejoin.result()  # rebalance timeout 30 s
    assert answer["generation_id"] == 2
    assert [m["member_id"] for m in answer["members"]] == [a]
    assert h.coord.heartbeat("g", 2, b, None) == UNKNOWN_MEMBER


async def test_leave_triggers_rebalance(h: Harness) -> None:
    joins = await form_group(h, 2)
    a, b = joins[0]["member_id"], joins[1]["member_id"]
    assert h.coord.leave_group("g", [(b, None)]) == (0, [0])
    assert h.coord.heartbeat("g", 1, a, None) == REBALANCE
    assert h.coord.leave_group("g", [("nobody", None)]) == (0, [UNKNOWN_MEMBER])
    assert h.coord.leave_group("other", [(a, None)]) == (0, [UNKNOWN_MEMBER])
    rejoin = await h.start_join(member_id=a)
    assert rejoin.result()["generation_id"] == 2
    # Last member leaves: the group ends up Empty with a new generation.
    assert h.coord.leave_group("g", [(a, None)]) == (0, [0])
    group = h.coord.groups["g"]  # no member to wait for: Empty at once
    assert group.state is GroupState.EMPTY
    assert group.generation_id == 3


async def test_sync_during_rebalance_is_answered_rebalance_in_progress(h: Harness) -> None:
    _, follower = await two_joined(h)
    parked = spawn(h.coord.sync_group("g", 1, follower["member_id"], None, {}))
    await settle()
    newcomer = await h.start_join(client_id="z")  # back to PreparingRebalance
    assert parked.result()["error_code"] == REBALANCE
    assert not newcomer.done()


async def test_generation_and_member_checks(h: Harness) -> None:
    joins = await form_group(h, 1)
    me = joins[0]["member_id"]
    assert h.coord.heartbeat("g", 0, me, None) == ILLEGAL_GENERATION
    assert h.coord.heartbeat("g", 1, "stranger", None) == UNKNOWN_MEMBER
    assert h.coord.heartbeat("nogroup", 1, me, None) == UNKNOWN_MEMBER
    assert (await h.coord.sync_group("g", 7, me, None, {}))["error_code"] == ILLEGAL_GENERATION
    unknown = await h.start_join(member_id="stranger")
    assert unknown.result()["error_code"] == UNKNOWN_MEMBER
    # A follower-less Stable member that rejoins with the same protocols as leader rebalances.
    assert (await h.coord.sync_group("g", 1, me, None, {}))["assignment"] == me.encode()


async def test_protocol_selection_and_inconsistent_protocols(h: Harness) -> None:
    a = await h.start_join(client_id="a", protocols=[("range", b""), ("roundrobin", b"r")])
    b = await h.start_join(client_id="b", protocols=[("sticky", b""), ("roundrobin", b"r")])
    c = await h.start_join(client_id="c", protocols=[("cooperative", b"")])
    assert c.result()["error_code"] == errors.InconsistentGroupProtocolError.errno
    h.clock.advance(200)
    await settle()
    assert a.result()["protocol_name"] == b.result()["protocol_name"] == "roundrobin"


async def test_invalid_requests(h: Harness) -> None:
    bad_timeout = await h.start_join(session_timeout_ms=10)
    assert bad_timeout.result()["error_code"] == errors.InvalidSessionTimeoutError.errno
    bad_group = await h.start_join(group="")
    assert bad_group.result()["error_code"] == errors.InvalidGroupIdError.errno


async def test_static_member_rejoining_with_new_id_replaces_the_old(h: Harness) -> None:
    first = await h.start_join(instance_id="i-1")
    h.clock.advance(200)
    await settle()
    old_id = first.result()["member_id"]
    assert old_id.startswith("i-1-")
    second = await h.start_join(instance_id="i-1")
    h.clock.advance(200)
    await settle()
    new = second.result()
    assert new["error_code"] == 0 and new["member_id"] != old_id
    group = h.coord.groups["g"]
    assert list(group.members) == [new["member_id"]]
    assert h.coord.heartbeat("g", new["generation_id"], old_id, "i-1") == 82  # fenced
    assert h.coord.leave_group("g", [("", "i-1")]) == (0, [0])


async def test_closing_cancels_timers(h: Harness) -> None:
    await form_group(h, 2)
    await h.coord.close()
    assert h.clock.pending() == 0
    await asyncio.sleep(0)


async def test_leader_that_never_syncs_is_removed_at_the_rebalance_timeout(h: Harness) -> None:
    """Kafka's pending-sync expiry: a leader that keeps heartbeating but sends no SyncGroup
    does not stall the group; its follower's parked SyncGroup is answered."""
    leader, follower = await two_joined(h)
    parked = spawn(h.coord.sync_group("g", 1, follower["member_id"], None, {}))
    await settle()
    for _ in range(11):  # 27.5 s: both heartbeat, the follower's SyncGroup waits
        h.clock.advance(2500)
        await settle()
        assert h.coord.heartbeat("g", 1, leader["member_id"], None) == 0
        assert h.coord.heartbeat("g", 1, follower["member_id"], None) == 0
    assert not parked.done()
    h.clock.advance(2500)  # the rebalance timeout (30 s) since the join phase ended
    await settle()
    assert parked.result()["error_code"] == REBALANCE
    group = h.coord.groups["g"]
    assert list(group.members) == [follower["member_id"]]
    assert h.coord.heartbeat("g", 1, leader["member_id"], None) == UNKNOWN_MEMBER
    rejoin = await h.start_join(member_id=follower["member_id"])
    answer = rejoin.result()
    assert (answer["generation_id"], answer["leader"]) == (2, follower["member_id"])


async def test_follower_that_never_syncs_is_removed_after_the_group_is_stable(
    h: Harness,
) -> None:
    leader, follower = await two_joined(h)
    assert (await h.coord.sync_group("g", 1, leader["member_id"], None, {}))["error_code"] == 0
    group = h.coord.groups["g"]
    assert group.state is GroupState.STABLE
    for _ in range(12):  # both heartbeat; the follower never asks for its assignment
        h.clock.advance(2500)
        await settle()
        for j in (leader, follower):
            h.coord.heartbeat("g", 1, j["member_id"], None)
    assert group.state is GroupState.PREPARING_REBALANCE
    assert list(group.members) == [leader["member_id"]]
    assert h.coord.heartbeat("g", 1, follower["member_id"], None) == UNKNOWN_MEMBER


async def test_every_member_owes_a_sync_and_close_cancels_that_timer(h: Harness) -> None:
    for client in ("a", "b"):
        await h.start_join(client_id=client)
    h.clock.advance(200)
    await settle()
    group = h.coord.groups["g"]
    assert group.pending_sync == set(group.members) and h.clock.pending() == 3
    await h.coord.close()  # two session timers and the pending-sync timer
    assert h.clock.pending() == 0
