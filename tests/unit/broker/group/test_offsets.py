"""Offset commit/fetch, persistence in __consumer_offsets, loading, expiration, admin APIs."""

from __future__ import annotations

import dataclasses

from tests.unit.broker.group.conftest import CONFIG, Harness, settle
from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.broker.group.group import GroupState
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def offsets_of(h: Harness, group: str = "g") -> dict[TopicPartition, int]:
    error, committed = h.coord.fetch_offsets(group, None)
    assert error == 0
    return {tp: v.offset for tp, v in committed.items()}


async def test_simple_commit_without_group_is_stored_as_kafka_records(h: Harness) -> None:
    result = await h.coord.commit_offsets(
        "g", -1, "", None, -1, {T0: (5, -1, "m"), T1: (7, 3, None)}
    )
    assert result == {T0: 0, T1: 0}
    assert offsets_of(h) == {T0: 5, T1: 7}
    assert h.coord.fetch_offsets("g", [T1, TopicPartition("t", 9)])[1][T1].metadata == ""
    # One batch with two records on the group's partition of __consumer_offsets.
    tp = TopicPartition("__consumer_offsets", fmt.partition_for("g", 4))
    ((_, _, raw),) = h.rm.logs[tp].batches
    ((header, records),) = list(decode_batches(raw))
    assert header.records_count == 2
    assert fmt.decode_key(records[0].key or b"") == fmt.OffsetKey("g", "t", 0)
    value = fmt.decode_offset_value(records[1].value or b"")
    assert (value.offset, value.leader_epoch, value.commit_timestamp) == (7, 3, h.clock.now)
    assert h.rm.topics["__consumer_offsets"] == (4, h.coord.config.topic_configs())
    assert h.rm.topics["__consumer_offsets"][1]["cleanup.policy"] == "compact"


async def test_commit_checks_member_and_generation(h: Harness) -> None:
    joins = await form_group(h, 2)
    me = joins[0]["member_id"]
    ok = await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (1, -1, "")})
    assert ok == {T0: 0}
    stale = await h.coord.commit_offsets("g", 0, me, None, -1, {T0: (2, -1, "")})
    assert stale == {T0: errors.IllegalGenerationError.errno}
    stranger = await h.coord.commit_offsets("g", 1, "x", None, -1, {T0: (2, -1, "")})
    assert stranger == {T0: errors.UnknownMemberIdError.errno}
    simple = await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (2, -1, "")})
    assert simple == {T0: errors.UnknownMemberIdError.errno}  # the group has members
    unknown = await h.coord.commit_offsets("other", 3, "x", None, -1, {T0: (2, -1, "")})
    assert unknown == {T0: errors.IllegalGenerationError.errno}
    big = await h.coord.commit_offsets("g", 1, me, None, -1, {T1: (2, -1, "x" * 5000)})
    assert big == {T1: errors.OffsetMetadataTooLargeError.errno}
    assert offsets_of(h) == {T0: 1}
    # During the join phase a member of the current generation may still commit ...
    await h.start_join(client_id="newcomer")
    assert await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (3, -1, "")}) == {T0: 0}


async def test_commit_during_completing_rebalance_is_refused(h: Harness) -> None:
    a = await h.start_join()
    h.clock.advance(100)
    await settle()
    me = a.result()["member_id"]
    refused = await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (3, -1, "")})
    assert refused == {T0: errors.RebalanceInProgressError.errno}


async def test_failed_append_is_not_visible(h: Harness) -> None:
    h.rm.fail_appends = True  # a storage error: Kafka answers NOT_COORDINATOR
    result = await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    assert result == {T0: errors.NotCoordinatorError.errno}
    assert offsets_of(h) == {}


async def test_a_commit_too_large_for_the_offsets_topic_is_invalid_commit_offset_size(
    h: Harness,
) -> None:
    """Kafka's GroupMetadataManager answers INVALID_COMMIT_OFFSET_SIZE (28) when the append
    is refused as too large; this broker used to answer COORDINATOR_NOT_AVAILABLE, which
    clients retry for ever. A partition whose metadata is too long keeps its own error."""
    too_large = (
        errors.RecordListTooLargeError("above segment.bytes"),
        errors.MessageTooLargeError("above max.message.bytes"),
        errors.InvalidFetchSizeError("read back"),
    )
    for error in too_large:
        h.rm.append_error = error
        result = await h.coord.commit_offsets(
            "g", -1, "", None, -1, {T0: (5, -1, "m"), T1: (6, -1, "x" * 5000)}
        )
        assert result == {
            T0: errors.InvalidCommitOffsetSizeError.errno,
            T1: errors.OffsetMetadataTooLargeError.errno,
        }
        assert offsets_of(h) == {}
    h.rm.append_error = None
    assert await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "m")}) == {T0: 0}
    assert offsets_of(h) == {T0: 5}


async def test_offsets_and_groups_survive_restart(h: Harness) -> None:
    joins = await form_group(h, 2)
    me = joins[0]["member_id"]
    await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (10, -1, "a")})
    await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (20, -1, "b"), T1: (4, -1, "")})
    await h.coord.commit_offsets("simple", -1, "", None, -1, {T1: (99, -1, "")})
    h2 = await h.restart()
    assert offsets_of(h2) == {T0: 20, T1: 4}  # the last value per key wins
    assert offsets_of(h2, "simple") == {T1: 99}
    group = h2.coord.groups["g"]
    assert group.state is GroupState.STABLE
    assert group.generation_id == 1
    assert set(group.members) == {j["member_id"] for j in joins}
    assert group.members[me].assignment == me.encode()
    assert h2.coord.heartbeat("g", 1, me, None) == 0
    # Restored members that never heartbeat again expire and the group rebalances to Empty.
    h2.clock.advance(10_001)
    await settle()
    h2.clock.advance(1)
    await settle()
    assert h2.coord.groups["g"].state is GroupState.EMPTY
    await h2.coord.close()


async def test_delete_group_writes_tombstones(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    joins = await form_group(h, 1)
    me = joins[0]["member_id"]
    assert await h.coord.delete_groups(["g", "nope", ""]) == {
        "g": errors.NonEmptyGroupError.errno,
        "nope": errors.GroupIdNotFoundError.errno,
        "": errors.GroupIdNotFoundError.errno,  # a group id like any other here (Kafka)
    }
    assert h.coord.leave_group("g", [(me, None)]) == (0, [0])
    assert await h.coord.delete_groups(["g"]) == {"g": 0}
    assert offsets_of(h) == {}
    assert h.coord.describe_group("g")["group_state"] == "Dead"
    h2 = await h.restart()
    assert offsets_of(h2) == {}
    assert "g" not in h2.coord.groups
    await h2.coord.close()


async def test_expired_offsets_of_empty_groups_are_deleted() -> None:
    config = dataclasses.replace(CONFIG, offsets_retention_minutes=1)
    rm, clock = FakeReplicaManager(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, config, clock))
    await h.coord.start()
    await h.coord.commit_offsets("old", -1, "", None, -1, {T0: (1, -1, "")})
    await h.coord.commit_offsets("short", -1, "", None, 10_000, {T0: (1, -1, "")})
    joins = await form_group(h, 1)
    me = joins[0]["member_id"]
    await h.coord.commit_offsets("g", 1, me, None, -1, {T0: (1, -1, "")})
    for _ in range(4):
        h.clock.advance(3000)
        assert h.coord.heartbeat("g", 1, me, None) == 0
    await h.coord.expire_offsets()
    assert offsets_of(h, "short") == {}
    assert offsets_of(h, "old") == {T0: 1}
    for _ in range(20):  # the member stays alive for another minute
        h.clock.advance(3000)
        assert h.coord.heartbeat("g", 1, me, None) == 0
    await h.coord.expire_offsets()
    assert offsets_of(h, "old") == {}
    assert "old" not in h.coord.groups
    assert offsets_of(h, "g") == {T0: 1}  # a group with members keeps its offsets
    assert h.coord.leave_group("g", [(me, None)]) == (0, [0])
    h.clock.advance(30_000)
    await settle()
    await h.coord.expire_offsets()
    assert offsets_of(h, "g") == {T0: 1}  # empty for 30 s only
    h.clock.advance(31_000)
    await h.coord.expire_offsets()
    assert offsets_of(h, "g") == {}
    assert "g" not in h.coord.groups  # Empty and without offsets: forgotten
    await h.coord.close()
    h2 = Harness(rm, clock, GroupCoordinator(rm, config, clock))
    await h2.coord.start()
    assert offsets_of(h2, "old") == {} and offsets_of(h2, "short") == {}
    assert offsets_of(h2, "g") == {}
    assert h2.coord.groups == {}  # the group metadata was tombstoned too
    await h2.coord.close()


async def test_describe_and_list(h: Harness) -> None:
    await h.coord.commit_offsets("simple", -1, "", None, -1, {T0: (1, -1, "")})
    joins = await form_group(h, 2)
    described = h.coord.describe_group("g")
    assert described["group_state"] == "Stable"
    assert described["protocol_type"] == "consumer"
    assert described["protocol_data"] == "range"
    by_id = {m["member_id"]: m for m in described["members"]}
    assert set(by_id) == {j["member_id"] for j in joins}
    for mid, m in by_id.items():
        assert m["member_assignment"] == mid.encode()
        assert m["member_metadata"].startswith(b"sub-c")
        assert m["client_host"] == "/127.0.0.1"
    error, groups = h.coord.list_groups()
    assert error == 0
    assert {(g.group_id, g.protocol_type or "") for g in groups} == {
        ("g", "consumer"),
        ("simple", ""),
    }
    assert h.coord.describe_group("missing")["group_state"] == "Dead"


async def test_undecodable_records_are_skipped_on_load(h: Harness) -> None:
    from tiered_mq.record.records import encode_batch

    tp = TopicPartition("__consumer_offsets", fmt.partition_for("g", 4))
    good = fmt.encode_offset_key(fmt.OffsetKey("g", "t", 0))
    value = fmt.encode_offset_value(fmt.OffsetValue(8, -1, "", 1))
    await h.rm.append_internal(
        tp, encode_batch([(b"\x00\x07junk", b"x", None, 1), (good, value, None, 1)])
    )
    h2 = await h.restart()
    assert offsets_of(h2) == {T0: 8}
    await h2.coord.close()


async def test_commit_during_completing_rebalance_checks_member_and_generation_first(
    h: Harness,
) -> None:
    """Kafka's validateOffsetCommit order: a zombie learns it is stale or unknown (and a
    replaced static instance that it is fenced), not REBALANCE_IN_PROGRESS."""
    (j,) = await form_group(h, 1)
    me = j["member_id"]
    newcomer = await h.start_join(client_id="n")
    rejoin = await h.start_join(member_id=me)
    assert rejoin.result()["generation_id"] == newcomer.result()["generation_id"] == 2
    assert h.coord.groups["g"].state is GroupState.COMPLETING_REBALANCE

    async def commit(generation: int, member: str, instance: str | None = None) -> int:
        result = await h.coord.commit_offsets(
            "g", generation, member, instance, -1, {T0: (1, -1, "")}
        )
        return result[T0]

    assert await commit(1, me) == errors.IllegalGenerationError.errno
    assert await commit(2, "zombie") == errors.UnknownMemberIdError.errno
    assert await commit(2, me, "unknown-instance") == errors.UnknownMemberIdError.errno
    assert await commit(2, me) == errors.RebalanceInProgressError.errno
    assert await commit(-1, "") == errors.UnknownMemberIdError.errno
    assert offsets_of(h) == {}


async def test_describe_reports_protocol_only_when_stable_and_assignments_always(
    h: Harness,
) -> None:
    """Kafka's describeGroups: outside Stable no protocol_data and no member metadata, but the
    members' assignments (describeNoMetadata)."""
    joins = await form_group(h, 2)
    a = joins[0]["member_id"]
    await h.start_join(member_id=a, client_id="c0")  # the leader rejoins: PreparingRebalance
    described = h.coord.describe_group("g")
    assert described["group_state"] == "PreparingRebalance"
    assert described["protocol_type"] == "consumer" and described["protocol_data"] == ""
    for m in described["members"]:
        assert m["member_metadata"] == b""
        assert m["member_assignment"] == m["member_id"].encode()
    await h.start_join(member_id=joins[1]["member_id"], client_id="c1")  # CompletingRebalance
    described = h.coord.describe_group("g")
    assert described["group_state"] == "CompletingRebalance"
    assert described["protocol_data"] == ""
    assert {m["member_assignment"] for m in described["members"]} == {
        j["member_id"].encode() for j in joins
    }
    await h.start_join(client_id="late")  # back to PreparingRebalance: no assignment held
    described = h.coord.describe_group("g")
    assert {m["member_assignment"] for m in described["members"]} == {b""}
