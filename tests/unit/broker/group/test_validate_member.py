"""JoinGroup (a known member), SyncGroup, Heartbeat and OffsetCommit check the member as
Kafka's ClassicGroup.validateMember does, in its order: a ``group.instance.id`` the group does
not know is UNKNOWN_MEMBER_ID even from a known member id (it was answered as that member
before: a heartbeat kept it alive, a SyncGroup got its assignment, a JoinGroup its answer);
one that maps to another member is FENCED_INSTANCE_ID (even from an unknown member id); then
the member id must be known (UNKNOWN_MEMBER_ID)."""

from __future__ import annotations

from tests.unit.broker.group.conftest import Harness
from tests.unit.broker.group.test_static_membership import STATIC, static_group
from tiered_mq import errors
from tiered_mq.broker.group.group import GroupState
from tiered_mq.topic_partition import TopicPartition

UNKNOWN_MEMBER = errors.UnknownMemberIdError.errno
FENCED = errors.FencedInstanceIdError.errno


async def test_heartbeat_and_sync_validate_the_instance_first(h: Harness) -> None:
    js, jd = await static_group(h)  # static "s" (instance "s") and dynamic "d", Stable, gen 1
    s, d = js["member_id"], jd["member_id"]
    # a known member id naming an instance the group does not know
    assert h.coord.heartbeat("g", 1, d, "unknown") == UNKNOWN_MEMBER
    assert h.coord.heartbeat("g", 1, s, "unknown") == UNKNOWN_MEMBER
    got = await h.coord.sync_group("g", 1, d, "unknown", {})
    assert got == {"error_code": UNKNOWN_MEMBER, "assignment": b""}
    # an instance held by another member: fenced, whether the member id is known or not
    assert h.coord.heartbeat("g", 1, d, "s") == FENCED
    assert h.coord.heartbeat("g", 1, "gone", "s") == FENCED
    assert (await h.coord.sync_group("g", 1, d, "s", {}))["error_code"] == FENCED
    # the instance is checked before the generation, the member id before the generation too
    assert h.coord.heartbeat("g", 7, d, "unknown") == UNKNOWN_MEMBER
    assert h.coord.heartbeat("g", 7, "gone", None) == UNKNOWN_MEMBER
    # the right pairs pass
    assert h.coord.heartbeat("g", 1, s, "s") == 0
    assert h.coord.heartbeat("g", 1, d, None) == 0
    assert await h.coord.sync_group("g", 1, s, "s", {}) == {"error_code": 0, "assignment": b"s"}
    assert h.coord.groups["g"].state is GroupState.STABLE


async def test_a_known_members_join_naming_an_unknown_instance_is_refused(h: Harness) -> None:
    _, jd = await static_group(h)
    d = jd["member_id"]
    rejoin = await h.start_join(member_id=d, instance_id="unknown", client_id="d", **STATIC)
    answer = rejoin.result()
    assert (answer["error_code"], answer["member_id"]) == (UNKNOWN_MEMBER, d)
    group = h.coord.groups["g"]
    assert group.state is GroupState.STABLE and group.generation_id == 1
    assert "unknown" not in group.static_members
    fenced = (await h.start_join(member_id=d, instance_id="s", client_id="d", **STATIC)).result()
    assert fenced["error_code"] == FENCED


async def test_offset_commit_validates_the_same_way(h: Harness) -> None:
    js, jd = await static_group(h)
    s, d = js["member_id"], jd["member_id"]
    tp = TopicPartition("t", 0)
    offsets = {tp: (5, -1, None)}
    for member, instance, expected in (
        (d, "unknown", UNKNOWN_MEMBER),
        (d, "s", FENCED),
        ("gone", None, UNKNOWN_MEMBER),
        (s, "s", 0),
    ):
        got = await h.coord.commit_offsets("g", 1, member, instance, -1, offsets)
        assert got[tp] == expected, (member, instance)
