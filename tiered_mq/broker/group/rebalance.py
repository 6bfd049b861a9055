"""The rebalance engine under :class:`~tiered_mq.broker.group.membership.Membership`.

Holds the groups and runs the parts of the classic protocol no single request owns: the join
phase (PreparingRebalance until every member rejoined, the deadline or the initial delay, then
a new generation in CompletingRebalance; steps 1-3 in membership's docstring), the pending-sync
deadline, session timeouts (one ``Scheduler`` timer per member, re-armed by every heartbeat,
join and sync; a member with a JoinGroup or SyncGroup parked is kept alive; a fired timer
removes the member as if it had left), and member removal, which answers the member's parked
requests with an error.

At the end of a join phase (Kafka's onCompleteJoin) only dynamic members that did not rejoin
are removed; static members that did not rejoin stay, with their assignment, and are listed to
the leader. If the leader did not rejoin, the first member that did leads; if no member
rejoined but some (static) remain, the phase waits another rebalance timeout. Every member of
the new generation then owes a SyncGroup (Kafka's schedulePendingSync): those still owing one
after the group's rebalance timeout, in the same generation and while CompletingRebalance or
Stable, are removed and the group rebalances (onExpirePendingSync). A new rebalance clears the
debt and cancels that timer; so does the last SyncGroup owed.

Parked requests are futures: a JoinGroup future is answered with ``join_error`` or the
generation's join response, a SyncGroup future with ``sync_error`` or the member's assignment;
a future is answered at most once. Everything runs on the event loop between awaits and never
blocks; group metadata is stored by tasks of their own (``_spawn``) that ``close()`` cancels,
with every timer. A crash loses only in-memory state: members rejoin, and the stored group
metadata is reloaded by the coordinator.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.group import (
    GroupMetadata,
    GroupState,
    JoinResponse,
    MemberMetadata,
    SyncResponse,
)
from tiered_mq.broker.group.seams import Scheduler
from tiered_mq.broker.group.store_failures import StoreFailureLog

log = logging.getLogger("tiered_mq.broker.group.membership")  # one logger for the protocol

NONE = 0
FENCED_INSTANCE_ID = errors.FencedInstanceIdError.errno  # replaced static member
S = GroupState


def join_error(error_code: int, member_id: str = "") -> JoinResponse:
    return {
        "error_code": error_code,
        "generation_id": -1,
        "protocol_name": "",
        "leader": "",
        "member_id": member_id,
        "members": [],
    }


def sync_error(error_code: int) -> SyncResponse:
    return {"error_code": error_code, "assignment": b""}


class Rebalancer:
    """Groups, the join phase, session timers and member removal (see the module docstring)."""

    def __init__(
        self,
        config: GroupConfig,
        scheduler: Scheduler,
        store_group: Callable[[GroupMetadata], Awaitable[None]],
    ) -> None:
        self.config = config
        self.scheduler = scheduler
        self.groups: dict[str, GroupMetadata] = {}
        self._store_group = store_group
        self._store_failures = StoreFailureLog(log)  # a full disk fails every store: no flood
        self._tasks: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        for group in self.groups.values():
            if group.join_timer is not None:
                group.join_timer.cancel()
            self._clear_pending_sync(group)
            for member in group.members.values():
                member.cancel_heartbeat()
            for handle in group.pending_members.values():
                if handle is not None:
                    handle.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the join phase --------------------------------------------------------------------

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.state is S.COMPLETING_REBALANCE:
            # Kafka's resetAndPropagateAssignmentError: the assignment never became current.
            for member in group.members.values():
                member.assignment = b""
                self._answer_sync(member, sync_error(errors.RebalanceInProgressError.errno))
        self._clear_pending_sync(group)
        was_empty = group.state is S.EMPTY
        group.transition_to(S.PREPARING_REBALANCE, self.scheduler.now_ms())
        log.info("group %s: preparing rebalance (%s)", group.group_id, reason)
        if group.join_timer is not None:
            group.join_timer.cancel()
        timeout = group.max_rebalance_timeout_ms()
        if was_empty:
            delay = min(self.config.group_initial_rebalance_delay_ms, timeout)
            group.initial_join_phase = True
            group.new_member_added = False
            group.initial_delay_remaining_ms = max(timeout - delay, 0)
            group.join_timer = self.scheduler.call_later(
                delay, lambda: self._on_initial_join_delay(group)
            )
        else:
            group.initial_join_phase = False
            group.join_timer = self.scheduler.call_later(
                timeout, lambda: self._on_join_deadline(group)
            )

    def _on_initial_join_delay(self, group: GroupMetadata) -> None:
        if group.state is not S.PREPARING_REBALANCE or not group.initial_join_phase:
            return
        remaining = group.initial_delay_remaining_ms
        if group.new_member_added and remaining > 0:
            delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            group.new_member_added = False
            group.initial_delay_remaining_ms = max(remaining - delay, 0)
            group.join_timer = self.scheduler.call_later(
                delay, lambda: self._on_initial_join_delay(group)
            )
            return
        group.initial_join_phase = False
        self._complete_join(group)

    def _on_join_deadline(self, group: GroupMetadata) -> None:
        if group.state is S.PREPARING_REBALANCE:
            self._complete_join(group)

    def _maybe_complete_join(self, group: GroupMetadata) -> None:
        if (
            group.state is S.PREPARING_REBALANCE
            and not group.initial_join_phase
            and group.all_members_joined()
        ):
            self._complete_join(group)

    def _complete_join(self, group: GroupMetadata) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        for member in [m for m in group.members.values() if m.awaiting_join is None]:
            if member.group_instance_id is not None:
                continue  # a static member stays until its session timeout (KIP-345)
            log.info("group %s: member %s did not rejoin", group.group_id, member.member_id)
            self._remove_member(group, member.member_id, errors.UnknownMemberIdError.errno)
        if not group.elect_joined_leader() and group.members:
            # Only static members that did not rejoin are left: wait for them (or for their
            # session timeouts) another rebalance timeout, as Kafka does.
            log.info("group %s: no member rejoined, the join phase goes on", group.group_id)
            group.join_timer = self.scheduler.call_later(
                group.max_rebalance_timeout_ms(), lambda: self._on_join_deadline(group)
            )
            return
        now = self.scheduler.now_ms()
        group.generation_id += 1
        if not group.members:
            group.protocol_name = None
            group.transition_to(S.EMPTY, now)
            log.info("group %s: generation %d is empty", group.group_id, group.generation_id)
            self._spawn(self._store_quietly(group))
            return
        group.protocol_name = group.select_protocol()
        group.transition_to(S.COMPLETING_REBALANCE, now)
        log.info(
            "group %s: generation %d, protocol %s, leader %s, %d members",
            group.group_id,
            group.generation_id,
            group.protocol_name,
            group.leader_id,
            len(group.members),
        )
        for member in group.members.values():
            future, member.awaiting_join = member.awaiting_join, None
            if future is not None and not future.done():
                future.set_result(group.join_response(member.member_id))
            member.is_new = False
            self.schedule_session_timeout(group, member)
        self._schedule_pending_sync(group)

    # -- the pending-sync deadline ---------------------------------------------------------

    def _schedule_pending_sync(self, group: GroupMetadata) -> None:
        """Every member of the new generation owes a SyncGroup within the rebalance timeout."""
        self._clear_pending_sync(group)
        group.pending_sync = set(group.members)
        generation = group.generation_id
        group.sync_timer = self.scheduler.call_later(
            group.max_rebalance_timeout_ms(), lambda: self._on_sync_deadline(group, generation)
        )

    @staticmethod
    def _clear_pending_sync(group: GroupMetadata) -> None:
        group.pending_sync.clear()
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    def _synced(self, group: GroupMetadata, member_id: str) -> None:
        """``member_id`` sent its SyncGroup; the timer goes once nobody owes one."""
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._clear_pending_sync(group)

    def _on_sync_deadline(self, group: GroupMetadata, generation: int) -> None:
        group.sync_timer = None
        if generation != group.generation_id or not group.is_in(S.COMPLETING_REBALANCE, S.STABLE):
            return
        missing = sorted(group.pending_sync)
        group.pending_sync.clear()
        if not missing:
            return
        for member_id in missing:
            log.info("group %s: member %s sent no SyncGroup", group.group_id, member_id)
            self._remove_member(group, member_id, errors.UnknownMemberIdError.errno)
        self._prepare_rebalance(group, f"members {missing} sent no SyncGroup in time")
        self._maybe_complete_join(group)  # e.g. nobody is left: Empty at once

    def rebalance_if_over_capacity(self, group: GroupMetadata) -> None:
        """A group loaded Stable with more members than ``group.max.size`` (lowered since it
        formed) rebalances, as Kafka does for a freshly loaded group: its members rejoin and
        those beyond the maximum are refused GROUP_MAX_SIZE_REACHED (membership.py)."""
        if group.state is S.STABLE and len(group.members) > self.config.group_max_size:
            limit = self.config.group_max_size
            self._prepare_rebalance(group, f"{len(group.members)} members, group.max.size {limit}")

    async def _store_quietly(self, group: GroupMetadata) -> None:
        try:
            await self._store_group(group)
        except Exception:
            self._store_failures.failed(group.group_id, "storing group metadata")

    @staticmethod
    def _answer_sync(member: MemberMetadata, response: SyncResponse) -> None:
        future, member.awaiting_sync = member.awaiting_sync, None
        if future is not None and not future.done():
            future.set_result(response)

    def schedule_session_timeout(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.cancel_heartbeat()
        member.heartbeat_timer = self.scheduler.call_later(
            member.session_timeout_ms, lambda: self._on_session_timeout(group, member)
        )

    def _on_session_timeout(self, group: GroupMetadata, member: MemberMetadata) -> None:
        if group.members.get(member.member_id) is not member:
            return
        if member.awaiting_join is not None or member.awaiting_sync is not None:
            self.schedule_session_timeout(group, member)
            return
        log.info("group %s: member %s session timed out", group.group_id, member.member_id)
        self._remove_member_and_update_group(group, member.member_id)

    def _expire_pending(self, group: GroupMetadata, member_id: str) -> None:
        if group.pending_members.pop(member_id, "absent") != "absent":
            self._maybe_complete_join(group)

    # -- removal ---------------------------------------------------------------------------

    def _remove_member(self, group: GroupMetadata, member_id: str, error_code: int) -> None:
        member = group.remove(member_id)
        if member is None:
            return
        future, member.awaiting_join = member.awaiting_join, None
        if future is not None and not future.done():
            future.set_result(join_error(error_code, member_id))
        self._answer_sync(member, sync_error(error_code))

    def _remove_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        self._remove_member(group, member_id, errors.UnknownMemberIdError.errno)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, f"member {member_id} removed")
        self._maybe_complete_join(group)  # e.g. the last member left: Empty at once
