"""Failed writes of group state (a full disk): Kafka's answers, the partition taken offline for
a while so that members back off instead of rebalancing hundreds of times a second, recovery
once appends succeed again, and one ERROR line with a traceback per group and interval."""

from __future__ import annotations

import logging

import pytest

from tests.unit.broker.group.conftest import Harness, settle, spawn
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group.group import GroupState
from tiered_mq.broker.group.store_failures import OFFLINE_MS, StoreFailureLog, append_error
from tiered_mq.topic_partition import TopicPartition

NOT_COORDINATOR = errors.NotCoordinatorError.errno
T0 = TopicPartition("t", 0)


async def rebalance_and_sync(h: Harness, member: str) -> int:
    """``member`` (the only one) rejoins and syncs; the SyncGroup's error."""
    join = (await h.start_join(member_id=member)).result()
    assert join["error_code"] == 0, join
    sync = spawn(h.coord.sync_group("g", join["generation_id"], member, None, {member: b"a"}))
    await settle()
    return int(sync.result()["error_code"])


def test_append_errors_are_answered_as_kafka_does() -> None:
    not_available = errors.CoordinatorNotAvailableError.errno
    assert append_error(errors.KafkaStorageError("full")) == NOT_COORDINATOR
    assert append_error(OSError(28, "No space left on device")) == NOT_COORDINATOR
    assert append_error(errors.NotLeaderOrFollowerError()) == NOT_COORDINATOR
    assert append_error(errors.NotEnoughReplicasError()) == not_available
    assert append_error(errors.RequestTimedOutError()) == not_available
    assert append_error(errors.UnknownTopicOrPartitionError()) == not_available
    assert append_error(errors.RecordListTooLargeError()) == errors.UnknownServerError.errno
    assert append_error(errors.InvalidProducerEpochError()) == (
        errors.InvalidProducerEpochError.errno
    )
    assert append_error(RuntimeError("bug")) == not_available


async def test_a_full_disk_takes_the_groups_partition_offline_for_a_while(h: Harness) -> None:
    (joined,) = await form_group(h, 1)
    member = joined["member_id"]
    h.rm.append_error = errors.KafkaStorageError("No space left on device")
    assert await rebalance_and_sync(h, member) == NOT_COORDINATOR
    assert h.coord.groups["g"].state is GroupState.PREPARING_REBALANCE

    # offline: answered at once, without touching the group or the disk
    appends, generation = h.rm.appends, h.coord.groups["g"].generation_id
    assert not h.coord.available("g")
    assert (await h.start_join(member_id=member)).result()["error_code"] == NOT_COORDINATOR
    assert h.coord.heartbeat("g", generation, member, None) == NOT_COORDINATOR
    commit = await h.coord.commit_offsets("g", generation, member, None, -1, {T0: (5, -1, "")})
    assert commit == {T0: NOT_COORDINATOR}
    assert h.coord.groups["g"].generation_id == generation and h.rm.appends == appends
    assert h.coord.available("other-group") == (
        h.coord.partition_for("other-group") != h.coord.partition_for("g")
    )

    h.clock.advance(OFFLINE_MS - 1)
    assert not h.coord.available("g")
    h.clock.advance(1)  # tried again: still full, offline again (one rebalance per period)
    assert await rebalance_and_sync(h, member) == NOT_COORDINATOR
    assert not h.coord.available("g")

    h.rm.append_error = None  # space again
    h.clock.advance(OFFLINE_MS)
    assert await rebalance_and_sync(h, member) == 0
    assert h.coord.groups["g"].state is GroupState.STABLE
    generation = h.coord.groups["g"].generation_id
    commit = await h.coord.commit_offsets("g", generation, member, None, -1, {T0: (5, -1, "")})
    assert commit == {T0: 0} and h.coord.available("g")
    assert h.coord.fetch_offsets("g", [T0])[1][T0].offset == 5


async def test_other_append_errors_do_not_take_the_partition_offline(h: Harness) -> None:
    (joined,) = await form_group(h, 1)
    h.rm.append_error = errors.NotEnoughReplicasError("isr")
    assert await rebalance_and_sync(h, joined["member_id"]) == (
        errors.CoordinatorNotAvailableError.errno
    )
    assert h.coord.available("g")


async def test_offset_commits_failing_on_a_full_disk_log_one_line(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    h.rm.append_error = errors.KafkaStorageError("No space left on device")
    caplog.set_level(logging.ERROR)
    answers = []
    for _ in range(20):
        answers += (await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})).values()
        h.clock.advance(OFFLINE_MS)
    assert answers == [NOT_COORDINATOR] * 20
    failures = [r for r in caplog.records if "offset commit append failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is not None


async def test_a_rebalance_storm_on_a_full_disk_logs_one_line(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    (joined,) = await form_group(h, 1)
    member = joined["member_id"]
    h.rm.fail_appends = True
    caplog.set_level(logging.ERROR)
    answers = []
    for _ in range(20):
        answers.append(await rebalance_and_sync(h, member))
        h.clock.advance(OFFLINE_MS)
    assert answers == [NOT_COORDINATOR] * 20
    failures = [r for r in caplog.records if "storing the assignment failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is not None


def test_later_failures_are_counted_into_the_next_line(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    failures = StoreFailureLog(logging.getLogger("test.store"), interval_s=30, clock=lambda: now[0])
    caplog.set_level(logging.ERROR)

    def fail(t: float, group: str, what: str) -> None:
        now[0] = t
        try:
            raise OSError(28, "No space left on device")
        except OSError:
            failures.failed(group, what)

    for t in (0.0, 1.0, 2.0, 29.0, 31.0, 32.0, 62.0):
        fail(t, "g", "storing the assignment")
    fail(1.0, "other", "storing group metadata")  # each group has its own interval
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "group g: storing the assignment failed",
        "group g: storing the assignment failed (3 more failures of this group's writes "
        "since the last line)",
        "group g: storing the assignment failed (1 more failures of this group's writes "
        "since the last line)",
        "group other: storing group metadata failed",
    ]
    assert all(r.exc_info is not None for r in caplog.records)
