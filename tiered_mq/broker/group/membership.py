"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic rebalance protocol.

A rebalance, as Kafka's GroupCoordinator runs it (state names in :mod:`group`):

1. A member joins, changes its protocols, leaves or misses its session timeout. The group moves
   to PreparingRebalance; members parked in SyncGroup are answered REBALANCE_IN_PROGRESS and
   heartbeats answer REBALANCE_IN_PROGRESS so every member rejoins.
2. The join phase ends when every known member has a JoinGroup parked (and no member answered
   MEMBER_ID_REQUIRED is still expected) or at the deadline, the largest rebalance timeout of the
   members. A group that was Empty instead waits ``group.initial.rebalance.delay.ms``, extended
   by another delay while new members keep arriving, up to the rebalance timeout.
3. Dynamic members that did not rejoin are removed (static ones stay, see rebalance.py); the
   generation grows by one; the protocol most members prefer among those all support is
   chosen; every parked JoinGroup is answered (the leader's answer lists the members and their
   metadata). The group is CompletingRebalance and every member owes a SyncGroup within the
   rebalance timeout, or is removed and the group rebalances again.
4. The leader's SyncGroup carries the assignment; it is persisted as a group metadata record,
   then every member's SyncGroup is answered with its share and the group is Stable. If the
   append fails every member is answered Kafka's error for it (NOT_COORDINATOR on a full disk,
   :func:`~tiered_mq.broker.group.store_failures.append_error`) and the group rebalances.

Static members (KIP-345): a JoinGroup with a known ``group.instance.id`` and no member id is a
restarted instance. Its new member id replaces the old one, whose parked requests are answered
FENCED_INSTANCE_ID; while the group is Stable and the selected protocol would not change, the
member keeps its assignment without a rebalance (Kafka's updateStaticMemberAndRebalance, see
``_replace_static_member``).

Session timeouts are ``Scheduler`` timers, one per member, re-armed by every heartbeat, join and
sync; a member with a JoinGroup or SyncGroup parked is kept alive (the join deadline or the
leader bounds that wait). When a timer fires the member is removed as if it had left.

``group.max.size`` (Kafka's acceptJoiningMember, checked before anything else of a JoinGroup
but the group id and session timeout): a JoinGroup that would take the group beyond it is
answered GROUP_MAX_SIZE_REACHED with no member id, and a refused current or pending member
leaves the group; an Empty group takes anyone, and during a join phase only the first to have
a JoinGroup parked count, so a group over the maximum sheds the last members to rejoin.

The empty group id is refused by all four with INVALID_GROUP_ID, as in Kafka (the offset APIs
serve it: a group created by a simple commit under it still has no members).

This module handles the four requests; the join phase, timers and member removal live in
:mod:`~tiered_mq.broker.group.rebalance` (``Membership`` extends its ``Rebalancer``).

Everything here runs on the event loop between awaits; a call never blocks. The only awaits
are the futures of parked requests and the appends of group metadata, which run as tasks of
their own so that a client closing its connection cannot cancel them halfway.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.group.group import GroupMetadata, JoinResponse, MemberMetadata, SyncResponse
from tiered_mq.broker.group.rebalance import (
    FENCED_INSTANCE_ID,
    NONE,
    Rebalancer,
    S,
    join_error,
    sync_error,
)
from tiered_mq.broker.group.store_failures import append_error

__all__ = ["FENCED_INSTANCE_ID", "NONE", "Membership", "join_error", "sync_error"]

log = logging.getLogger(__name__)


class Membership(Rebalancer):
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup over the groups of a ``Rebalancer``."""

    # -- JoinGroup -------------------------------------------------------------------------

    async def join_group(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        require_known_member_id: bool,
    ) -> JoinResponse:
        cfg = self.config
        if not group_id:
            return join_error(errors.InvalidGroupIdError.errno, member_id)
        if (
            not cfg.group_min_session_timeout_ms
            <= session_timeout_ms
            <= (cfg.group_max_session_timeout_ms)
        ):
            return join_error(errors.InvalidSessionTimeoutError.errno, member_id)
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return join_error(errors.UnknownMemberIdError.errno, member_id)
            group = GroupMetadata(group_id, state_timestamp_ms=self.scheduler.now_ms())
            self.groups[group_id] = group
        if not self._accepts_joining(group, member_id):
            self._refuse_over_capacity(group, member_id)
            return join_error(errors.GroupMaxSizeReachedError.errno)
        if group.state is S.DEAD:
            return join_error(errors.CoordinatorNotAvailableError.errno, member_id)
        if not group.supports_protocols(protocol_type, [name for name, _ in protocols]):
            return join_error(errors.InconsistentGroupProtocolError.errno, member_id)
        member = MemberMetadata(
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms if rebalance_timeout_ms > 0 else session_timeout_ms,
            session_timeout_ms,
            protocol_type,
            protocols,
        )
        if not member_id:
            result = self._join_new_member(group, member, require_known_member_id)
        else:
            result = self._join_known_member(group, member)
        if isinstance(result, dict):
            return result
        return await asyncio.shield(result)

    def _accepts_joining(self, group: GroupMetadata, member_id: str) -> bool:
        """Kafka's acceptJoiningMember under ``group.max.size``: an Empty group takes anyone;
        during PreparingRebalance a member whose JoinGroup is parked, else anyone while fewer
        than the maximum have one parked (so the last to rejoin a group over the maximum are
        the ones left out); otherwise a current member, else anyone while the group is below
        the maximum. A new static member counts as new (as in Kafka)."""
        limit = self.config.group_max_size
        member = group.members.get(member_id) if member_id else None
        if group.state in (S.EMPTY, S.DEAD):
            return True
        if group.state is S.PREPARING_REBALANCE:
            if member is not None and member.awaiting_join is not None:
                return True
            parked = sum(m.awaiting_join is not None for m in group.members.values())
            return parked < limit
        return member is not None or len(group.members) < limit

    def _refuse_over_capacity(self, group: GroupMetadata, member_id: str) -> None:
        """A member refused GROUP_MAX_SIZE_REACHED leaves the group (Kafka removes it): its
        id, pending or current, is forgotten and the join phase may end without it."""
        if member_id in group.pending_members:
            timer = group.pending_members.pop(member_id)
            if timer is not None:
                timer.cancel()
        elif member_id in group.members:
            log.info("group %s: member %s refused, group.max.size", group.group_id, member_id)
            self._remove_member(group, member_id, errors.GroupMaxSizeReachedError.errno)
        self._maybe_complete_join(group)

    def _join_new_member(
        self, group: GroupMetadata, member: MemberMetadata, require_known_member_id: bool
    ) -> JoinResponse | asyncio.Future[JoinResponse]:
        prefix = member.group_instance_id or member.client_id
        member.member_id = f"{prefix}-{uuid.uuid4()}"
        if member.group_instance_id is not None:
            old = group.member_by_instance(member.group_instance_id)
            if old is not None:
                return self._replace_static_member(group, old, member)
        elif require_known_member_id:
            timer = self.scheduler.call_later(
                member.session_timeout_ms,
                lambda: self._expire_pending(group, member.member_id),
            )
            group.pending_members[member.member_id] = timer
            return join_error(errors.MemberIdRequiredError.errno, member.member_id)
        return self._add_member_and_rebalance(group, member)

    def _replace_static_member(
        self, group: GroupMetadata, old: MemberMetadata, request: MemberMetadata
    ) -> asyncio.Future[JoinResponse]:
        """Kafka's updateStaticMemberAndRebalance: a known static instance rejoins with an
        unknown member id (a restart). The new member id replaces the old one, which is fenced;
        the member keeps its assignment. Stable, with the selected protocol unchanged: no
        rebalance; the group is stored with the new id, then the JoinGroup is answered with the
        current generation, no member list and the leader id from before the replacement (so
        the member never runs the assignment). Otherwise a rebalance starts (CompletingRebalance
        always: the leader may be assigning to the old id), or, PreparingRebalance, the member
        simply joins the ongoing phase."""
        previous_leader = group.leader_id
        old_id = old.member_id
        member = group.replace_static_member(old, request.member_id)
        log.info(
            "group %s: static member %s rejoined as %s (%s)",
            group.group_id,
            old_id,
            member.member_id,
            group.state.value,
        )
        old.cancel_heartbeat()
        old_join, old.awaiting_join = old.awaiting_join, None
        if old_join is not None and not old_join.done():
            old_join.set_result(join_error(FENCED_INSTANCE_ID, old_id))
        self._answer_sync(old, sync_error(FENCED_INSTANCE_ID))
        self.schedule_session_timeout(group, member)
        before = (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        member.protocols = request.protocols
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        if group.state is S.STABLE and group.select_protocol() == group.protocol_name:
            future: asyncio.Future[JoinResponse] = asyncio.get_running_loop().create_future()
            member.awaiting_join = future
            self._spawn(
                self._store_static_member(group, member, old_id, before, previous_leader, future)
            )
            return future
        return self._park_join(group, member)

    async def _store_static_member(
        self,
        group: GroupMetadata,
        member: MemberMetadata,
        old_id: str,
        before: tuple[list[tuple[str, bytes]], int, int],
        previous_leader: str | None,
        future: asyncio.Future[JoinResponse],
    ) -> None:
        """Persist a static member's new id (Stable), then answer its JoinGroup; a failed
        append puts the old id back (Kafka reverts the replacement) and answers the error."""
        generation = group.generation_id
        try:
            await self._store_group(group)
            error = NONE
        except Exception as exc:
            self._store_failures.failed(group.group_id, f"storing static member {old_id}")
            error = append_error(exc)
        unchanged = (
            not future.done()
            and member.awaiting_join is future
            and group.members.get(member.member_id) is member
            and group.state is S.STABLE
            and group.generation_id == generation
        )
        if not unchanged:
            return  # replaced again, removed, or a rebalance took the member in meanwhile
        member.awaiting_join = None
        if error:
            member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms = before
            member.cancel_heartbeat()
            restored = group.replace_static_member(member, old_id)
            self.schedule_session_timeout(group, restored)
            future.set_result(join_error(error))
            return
        answer = group.join_response(member.member_id)
        answer["leader"] = previous_leader or ""
        answer["members"] = []
        future.set_result(answer)

    def _join_known_member(
        self, group: GroupMetadata, request: MemberMetadata
    ) -> JoinResponse | asyncio.Future[JoinResponse]:
        member_id = request.member_id
        if member_id in group.pending_members:
            timer = group.pending_members.pop(member_id)
            if timer is not None:
                timer.cancel()
            return self._add_member_and_rebalance(group, request)
        invalid = group.validate_member(member_id, request.group_instance_id)
        if invalid:
            return join_error(invalid, member_id)
        member = group.members[member_id]
        if group.state is S.COMPLETING_REBALANCE and member.same_protocols(request.protocols):
            # The member missed our answer (e.g. a retried request): answer it again.
            self.schedule_session_timeout(group, member)
            return group.join_response(member_id)
        if (
            group.state is S.STABLE
            and member_id != group.leader_id
            and member.same_protocols(request.protocols)
        ):
            self.schedule_session_timeout(group, member)
            return group.join_response(member_id)
        if group.state in (S.EMPTY, S.DEAD):
            return join_error(errors.UnknownMemberIdError.errno, member_id)
        member.protocols = request.protocols
        member.client_id = request.client_id
        member.client_host = request.client_host
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        return self._park_join(group, member)

    def _add_member_and_rebalance(
        self, group: GroupMetadata, member: MemberMetadata
    ) -> asyncio.Future[JoinResponse]:
        group.add(member)
        group.new_member_added = True
        self.schedule_session_timeout(group, member)
        return self._park_join(group, member)

    def _park_join(self, group: GroupMetadata, member: MemberMetadata) -> asyncio.Future[Any]:
        if member.awaiting_join is not None and not member.awaiting_join.done():
            member.awaiting_join.set_result(
                join_error(errors.RebalanceInProgressError.errno, member.member_id)
            )
        future: asyncio.Future[JoinResponse] = asyncio.get_running_loop().create_future()
        member.awaiting_join = future
        if group.state in (S.EMPTY, S.STABLE, S.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, f"member {member.member_id} joined")
        self._maybe_complete_join(group)
        return future

    # -- SyncGroup -------------------------------------------------------------------------

    async def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResponse:
        if not group_id:
            return sync_error(errors.InvalidGroupIdError.errno)
        group = self.groups.get(group_id)
        if group is None:
            return sync_error(errors.UnknownMemberIdError.errno)
        if group.state is S.DEAD:
            return sync_error(errors.CoordinatorNotAvailableError.errno)
        invalid = group.validate_member(member_id, group_instance_id)
        if invalid:
            return sync_error(invalid)
        member = group.members[member_id]
        if generation_id != group.generation_id:
            return sync_error(errors.IllegalGenerationError.errno)
        if group.state is S.PREPARING_REBALANCE:
            return sync_error(errors.RebalanceInProgressError.errno)
        self.schedule_session_timeout(group, member)
        self._synced(group, member_id)
        if group.state is S.STABLE:
            return {"error_code": NONE, "assignment": member.assignment}
        # CompletingRebalance: park until the leader's assignment is stored.
        if member.awaiting_sync is not None and not member.awaiting_sync.done():
            member.awaiting_sync.set_result(sync_error(errors.RebalanceInProgressError.errno))
        future: asyncio.Future[SyncResponse] = asyncio.get_running_loop().create_future()
        member.awaiting_sync = future
        if member_id == group.leader_id:
            full = {mid: assignments.get(mid, b"") for mid in group.members}
            self._spawn(self._store_assignment(group, group.generation_id, full))
        return await asyncio.shield(future)

    async def _store_assignment(
        self, group: GroupMetadata, generation: int, assignments: dict[str, bytes]
    ) -> None:
        if group.state is not S.COMPLETING_REBALANCE or group.generation_id != generation:
            return  # a rebalance started before this task ran; its members were answered
        for mid, member in group.members.items():
            member.assignment = assignments.get(mid, b"")
        try:
            await self._store_group(group)
            error = NONE
        except Exception as exc:
            self._store_failures.failed(group.group_id, "storing the assignment")
            error = append_error(exc)
        if group.state is not S.COMPLETING_REBALANCE or group.generation_id != generation:
            return  # a rebalance started meanwhile; its members were answered already
        if error:
            for member in group.members.values():
                self._answer_sync(member, sync_error(error))
            self._prepare_rebalance(group, "storing the assignment failed")  # clears them
            return
        for member in group.members.values():
            self._answer_sync(member, {"error_code": NONE, "assignment": member.assignment})
        group.transition_to(S.STABLE, self.scheduler.now_ms())
        log.info("group %s: generation %d is stable", group.group_id, generation)

    # -- Heartbeat and session timeouts ----------------------------------------------------

    def heartbeat(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        if not group_id:
            return errors.InvalidGroupIdError.errno
        group = self.groups.get(group_id)
        if group is None:
            return errors.UnknownMemberIdError.errno
        if group.state is S.DEAD:
            return errors.CoordinatorNotAvailableError.errno
        invalid = group.validate_member(member_id, group_instance_id)
        if invalid:
            return invalid
        member = group.members[member_id]
        if generation_id != group.generation_id:
            return errors.IllegalGenerationError.errno
        if group.state is S.EMPTY:
            return errors.UnknownMemberIdError.errno
        self.schedule_session_timeout(group, member)
        if group.state is S.PREPARING_REBALANCE:
            return errors.RebalanceInProgressError.errno
        return NONE

    # -- LeaveGroup ------------------------------------------------------------------------

    def leave_group(
        self, group_id: str, leaving: list[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        """Remove members; returns the top-level error and one error per leaving member."""
        if not group_id:
            return errors.InvalidGroupIdError.errno, []
        group = self.groups.get(group_id)
        if group is None:
            return NONE, [errors.UnknownMemberIdError.errno] * len(leaving)
        if group.state is S.DEAD:
            return errors.CoordinatorNotAvailableError.errno, []
        return NONE, [self._leave_one(group, mid, iid) for mid, iid in leaving]

    def _leave_one(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> int:
        if instance_id is not None:
            member = group.member_by_instance(instance_id)
            if member is None:
                return errors.UnknownMemberIdError.errno
            if member_id and member_id != member.member_id:
                return FENCED_INSTANCE_ID
            member_id = member.member_id
        if member_id in group.pending_members:
            self._expire_pending(group, member_id)
            return NONE
        if member_id not in group.members:
            return errors.UnknownMemberIdError.errno
        log.info("group %s: member %s left", group.group_id, member_id)
        self._remove_member_and_update_group(group, member_id)
        return NONE
