"""OffsetDelete in the group coordinator: tombstones, group states, subscriptions, restarts."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest

from tests.unit.broker.group.conftest import CONFIG, Harness, settle, spawn
from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.consumer_protocol import subscription_topics
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.broker.group.group import GroupState
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition

T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
U0 = TopicPartition("u", 0)
SUBSCRIBED = errors.GroupSubscribedToTopicError.errno
Commit = dict[TopicPartition, tuple[int, int, str | None]]


def subscription(topics: list[str], version: int = 3) -> bytes:
    """A ConsumerProtocolSubscription as a client writes it (the fields after the topics are
    those of v1-3: null user data, no owned partitions, generation -1, null rack)."""
    out = struct.pack(">hi", version, len(topics))
    for name in (topic.encode() for topic in topics):
        out += struct.pack(">h", len(name)) + name
    return out + struct.pack(">iiih", -1, 0, -1, -1)


def offsets_of(h: Harness, group: str = "g") -> dict[TopicPartition, int]:
    error, committed = h.coord.fetch_offsets(group, None)
    assert error == 0
    return {tp: v.offset for tp, v in committed.items()}


async def commit(h: Harness, group: str, offsets: dict[TopicPartition, int]) -> None:
    values: Commit = {tp: (offset, -1, "") for tp, offset in offsets.items()}
    assert await h.coord.commit_offsets(group, -1, "", None, -1, values) == dict.fromkeys(
        offsets, 0
    )


async def subscribed_group(h: Harness, topics: list[str]) -> list[dict[str, Any]]:
    """Two members subscribing to ``topics`` (the second to the first only) form group g."""
    protocols = [[("range", subscription(topics))], [("range", subscription(topics[:1]))]]
    tasks = [await h.start_join(client_id=f"c{i}", protocols=p) for i, p in enumerate(protocols)]
    h.clock.advance(200)
    await settle()
    joins = [t.result() for t in tasks]
    syncs = [
        spawn(h.coord.sync_group("g", j["generation_id"], j["member_id"], None, {})) for j in joins
    ]
    await settle()
    assert all(s.result()["error_code"] == 0 for s in syncs)
    assert h.coord.groups["g"].state is GroupState.STABLE
    return joins


def test_subscription_topics_are_read_as_version_0_whatever_the_version() -> None:
    assert subscription_topics(subscription(["a", "bé"], version=0)) == ["a", "bé"]
    assert subscription_topics(subscription(["a"], version=7)) == ["a"]
    assert subscription_topics(subscription([])) == []
    for bad in (b"", b"\x00\x01\x00\x00", subscription(["abc"])[:9], b"\x00\x00\xff\xff\xff\xff"):
        with pytest.raises(ValueError):
            subscription_topics(bad)


async def test_empty_group_offsets_are_tombstoned_and_stay_deleted(h: Harness) -> None:
    await commit(h, "g", {T0: 5, T1: 7, U0: 1})
    error, codes = await h.coord.delete_offsets("g", [T0, U0, T2])
    assert (error, codes) == (0, {T0: 0, U0: 0, T2: 0})  # T2 had no offset: success
    assert offsets_of(h) == {T1: 7}
    assert h.coord.groups["g"].state is GroupState.EMPTY  # it still has an offset
    # One batch of tombstones (offset key, null value) for the partitions that had an offset.
    tp = TopicPartition("__consumer_offsets", fmt.partition_for("g", 4))
    ((header, records),) = list(decode_batches(h.rm.logs[tp].batches[-1][2]))
    assert header.records_count == 2
    keys = [fmt.decode_key(r.key or b"") for r in records]
    assert keys == [fmt.OffsetKey("g", "t", 0), fmt.OffsetKey("g", "u", 0)]
    assert [r.value for r in records] == [None, None]
    h2 = await h.restart()
    assert offsets_of(h2) == {T1: 7}
    assert h2.coord.groups["g"].state is GroupState.EMPTY
    await h2.coord.close()


async def test_deleting_the_last_offsets_of_an_empty_group_forgets_it(h: Harness) -> None:
    joins = await form_group(h, 1)  # a generation: the group has a metadata record
    me = joins[0]["member_id"]
    assert await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (3, -1, "")}) == {T0: 0}
    assert h.coord.leave_group("g", [(me, None)]) == (0, [0])
    await settle()
    assert h.coord.groups["g"].state is GroupState.EMPTY
    assert await h.coord.delete_offsets("g", [T0]) == (0, {T0: 0})
    assert "g" not in h.coord.groups  # Kafka: Empty and without offsets -> Dead
    assert h.coord.describe_group("g")["group_state"] == "Dead"
    assert await h.coord.delete_offsets("g", [T0]) == (errors.GroupIdNotFoundError.errno, {})
    h2 = await h.restart()
    assert "g" not in h2.coord.groups  # the group metadata was tombstoned too
    assert offsets_of(h2) == {}
    await h2.coord.close()


async def test_active_group_keeps_the_offsets_of_subscribed_topics(h: Harness) -> None:
    joins = await subscribed_group(h, ["t", "v"])
    me = joins[0]["member_id"]
    v0 = TopicPartition("v", 0)
    committed: Commit = {T0: (4, -1, ""), U0: (6, -1, ""), v0: (8, -1, "")}
    assert await h.coord.commit_offsets("g", 1, me, None, -1, committed) == dict.fromkeys(
        committed, 0
    )
    error, codes = await h.coord.delete_offsets("g", [T0, U0, v0, T1])
    assert error == 0
    assert codes == {T0: SUBSCRIBED, v0: SUBSCRIBED, T1: SUBSCRIBED, U0: 0}
    assert offsets_of(h) == {T0: 4, v0: 8}
    assert h.coord.groups["g"].state is GroupState.STABLE
    # During a rebalance the members' subscriptions still protect their topics.
    await h.start_join(client_id="late", protocols=[("range", subscription(["u"]))])
    assert h.coord.groups["g"].is_in(GroupState.PREPARING_REBALANCE)
    assert await h.coord.delete_offsets("g", [T0]) == (0, {T0: SUBSCRIBED})


async def test_undecodable_subscription_protects_nothing(h: Harness) -> None:
    joins = await form_group(h, 1)  # metadata b"sub-c0" is not a consumer subscription
    me = joins[0]["member_id"]
    assert await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (3, -1, "")}) == {T0: 0}
    assert await h.coord.delete_offsets("g", [T0]) == (0, {T0: 0})
    assert offsets_of(h) == {}
    assert h.coord.groups["g"].state is GroupState.STABLE  # members keep it alive


async def test_non_consumer_group_with_members_is_not_empty(h: Harness) -> None:
    await commit(h, "connect-g", {T0: 1})
    spawn(
        h.coord.join_group(
            group_id="connect-g",
            member_id="",
            group_instance_id=None,
            client_id="worker",
            client_host="/127.0.0.1",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=30_000,
            protocol_type="connect",
            protocols=[("sessioned", b"worker-metadata")],
            require_known_member_id=False,
        )
    )
    await settle()
    assert h.coord.groups["connect-g"].members
    assert await h.coord.delete_offsets("connect-g", [T0]) == (
        errors.NonEmptyGroupError.errno,
        {},
    )
    assert offsets_of(h, "connect-g") == {T0: 1}


async def test_group_errors(h: Harness) -> None:
    assert await h.coord.delete_offsets("nope", [T0]) == (errors.GroupIdNotFoundError.errno, {})
    assert await h.coord.delete_offsets("", [T0]) == (errors.InvalidGroupIdError.errno, {})
    await commit(h, "g", {T0: 5})
    h.rm.fail_appends = True
    assert await h.coord.delete_offsets("g", [T0]) == (
        errors.CoordinatorNotAvailableError.errno,
        {},
    )
    assert offsets_of(h) == {T0: 5}  # a failed append changes nothing
    loading = GroupCoordinator(FakeReplicaManager(), CONFIG, FakeScheduler())
    assert await loading.delete_offsets("g", [T0]) == (
        errors.CoordinatorLoadInProgressError.errno,
        {},
    )


class SlowAppends(FakeReplicaManager):
    """Appends land on the log at once; the next one's caller is answered only on release."""

    def __init__(self) -> None:
        super().__init__()
        self.hold: asyncio.Event | None = None

    async def append_internal(self, tp: TopicPartition, records: bytes) -> int:
        position = await super().append_internal(tp, records)
        hold, self.hold = self.hold, None
        if hold is not None:
            await hold.wait()
        return position


async def test_a_commit_appended_after_the_tombstones_wins() -> None:
    rm, clock = SlowAppends(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, CONFIG, clock))
    await h.coord.start()
    await commit(h, "g", {T0: 5})
    release = rm.hold = asyncio.Event()
    deleting = spawn(h.coord.delete_offsets("g", [T0]))
    await settle()
    await commit(h, "g", {T0: 9})  # on the log after the tombstone
    release.set()
    assert await deleting == (0, {T0: 0})
    assert offsets_of(h) == {T0: 9}
    h2 = await h.restart()
    assert offsets_of(h2) == {T0: 9}  # the log's order, as the cache had it
    await h2.coord.close()
