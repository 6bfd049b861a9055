"""Failed writes of group state on a full disk: every SyncGroup still gets its error, but the
log gets one ERROR line with a traceback per group and interval, not one per failure (members
rejoin at once, hundreds of times a second, so a line each would fill another disk)."""

from __future__ import annotations

import logging

import pytest

from tests.unit.broker.group.conftest import Harness, settle, spawn
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group.store_failures import StoreFailureLog


async def test_a_rebalance_storm_on_a_full_disk_logs_one_line(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    (joined,) = await form_group(h, 1)
    member = joined["member_id"]
    h.rm.fail_appends = True
    caplog.set_level(logging.ERROR)
    answers = []
    for _ in range(20):
        join = await h.start_join(member_id=member)
        await settle()
        generation = join.result()["generation_id"]
        sync = spawn(h.coord.sync_group("g", generation, member, None, {member: b"a"}))
        await settle()
        answers.append(sync.result()["error_code"])
    assert answers == [errors.CoordinatorNotAvailableError.errno] * 20
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
