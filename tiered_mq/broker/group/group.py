"""One consumer group's membership (classic protocol): members, generation, state.

State machine (Kafka's GroupState; every other transition raises AssertionError)::

                 first JoinGroup / member added
      +-------+ ------------------------------> +--------------------+
      | Empty |                                 | PreparingRebalance | <-----------------+
      +-------+ <------------------------------ +--------------------+                   |
          |      join phase ends, no members       |  join phase ends:                   |
          |                                        |  generation + 1, protocol chosen,   |
          |                                        v  JoinGroup answered                 |
          |                               +---------------------+   member joins,        |
          |                               | CompletingRebalance | --leaves, expires,---->+
          |                               +---------------------+   owes a SyncGroup     |
          |                                        |  leader's SyncGroup  too long       |
          |                                        v  (assignment stored)                |
          |                                   +--------+   member joins/leaves/expires   |
          |                                   | Stable | ------------------------------->+
          |                                   +--------+   (or owes a SyncGroup too long)
          +--> Dead  (DeleteGroups, or offsets expired; from any state: terminal)

Invariants: ``leader_id`` is a member id or None; ``generation_id`` grows by one per completed
join phase (including one that ends Empty); ``protocol_name`` is set exactly while the group has
members after a join phase; a member id lives in ``members`` or ``pending_members`` (joined
with an empty id on JoinGroup v4+, answered MEMBER_ID_REQUIRED), never both;
``static_members`` maps each static member's instance id to its current member id;
``pending_sync`` (members of this generation that owe a SyncGroup) is a subset of
``members`` and empty outside CompletingRebalance and Stable; ``sync_timer`` is armed when a
join phase ends and cancelled by the next rebalance or the last SyncGroup owed. A static member
may stay in ``members`` without rejoining a join phase (it keeps its assignment until its
session timeout or the pending-sync deadline).

Members await their JoinGroup/SyncGroup answer on asyncio futures held here; the coordinator
completes them. Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import asyncio
import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.group.seams import TimerHandle


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_S = GroupState
_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    _S.EMPTY: frozenset({_S.PREPARING_REBALANCE}),
    _S.PREPARING_REBALANCE: frozenset({_S.EMPTY, _S.STABLE, _S.COMPLETING_REBALANCE}),
    _S.COMPLETING_REBALANCE: frozenset({_S.PREPARING_REBALANCE}),
    _S.STABLE: frozenset({_S.COMPLETING_REBALANCE}),
    _S.DEAD: frozenset(_S),
}

JoinResponse = dict[str, Any]
SyncResponse = dict[str, Any]


@dataclass(eq=False)
class MemberMetadata:
    """One member of a group, with the join/sync request it has parked (if any)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    awaiting_join: asyncio.Future[JoinResponse] | None = None
    awaiting_sync: asyncio.Future[SyncResponse] | None = None
    heartbeat_timer: TimerHandle | None = None
    is_new: bool = True

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata_for(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def same_protocols(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def cancel_heartbeat(self) -> None:
        if self.heartbeat_timer is not None:
            self.heartbeat_timer.cancel()
            self.heartbeat_timer = None


@dataclass(eq=False)
class GroupMetadata:
    """A group's membership state; offsets live in the OffsetCache, not here."""

    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, MemberMetadata] = field(default_factory=dict)
    pending_members: dict[str, TimerHandle | None] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    # Join phase bookkeeping (PreparingRebalance only).
    join_timer: TimerHandle | None = None
    # Members of the current generation that owe a SyncGroup (Kafka's pendingSyncMembers) and
    # the timer that removes them at the group's rebalance timeout (CompletingRebalance/Stable).
    pending_sync: set[str] = field(default_factory=set)
    sync_timer: TimerHandle | None = None
    initial_join_phase: bool = False
    new_member_added: bool = False
    initial_delay_remaining_ms: int = 0
    state_timestamp_ms: int = -1

    # -- state -----------------------------------------------------------------------------

    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    def transition_to(self, target: GroupState, now_ms: int = -1) -> None:
        if self.state not in _VALID_PREVIOUS[target]:
            raise AssertionError(
                f"group {self.group_id}: illegal transition {self.state.value} -> {target.value}"
            )
        self.state = target
        self.state_timestamp_ms = now_ms

    # -- membership ------------------------------------------------------------------------

    def add(self, member: MemberMetadata) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> MemberMetadata | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_heartbeat()
        if (
            member.group_instance_id is not None
            and self.static_members.get(member.group_instance_id) == member_id
        ):
            del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_sync.discard(member_id)
        return member

    def replace_static_member(self, old: MemberMetadata, new_member_id: str) -> MemberMetadata:
        """Kafka's replaceStaticMember: a new member under ``new_member_id`` takes the place of
        the static member ``old`` (its instance, assignment, protocols, timeouts, leadership and
        any SyncGroup it owes); ``old``'s parked requests are left to the caller to answer."""
        assert old.group_instance_id is not None
        del self.members[old.member_id]
        new = MemberMetadata(
            new_member_id,
            old.group_instance_id,
            old.client_id,
            old.client_host,
            old.rebalance_timeout_ms,
            old.session_timeout_ms,
            old.protocol_type,
            old.protocols,
            assignment=old.assignment,
            is_new=old.is_new,
        )
        self.members[new_member_id] = new
        self.static_members[old.group_instance_id] = new_member_id
        if self.leader_id == old.member_id:
            self.leader_id = new_member_id
        if old.member_id in self.pending_sync:
            self.pending_sync.discard(old.member_id)
            self.pending_sync.add(new_member_id)
        return new

    def member_by_instance(self, group_instance_id: str) -> MemberMetadata | None:
        member_id = self.static_members.get(group_instance_id)
        return None if member_id is None else self.members.get(member_id)

    def validate_member(self, member_id: str, group_instance_id: str | None) -> int:
        """The error code for a request from ``member_id`` naming ``group_instance_id``
        (0: none), as Kafka's ClassicGroup.validateMember, in its order: a named instance must
        be known to the group (else UNKNOWN_MEMBER_ID, even when the member id is known) and
        map to ``member_id`` (else FENCED_INSTANCE_ID, KIP-345: another member holds it);
        then ``member_id`` must be a member (else UNKNOWN_MEMBER_ID)."""
        if group_instance_id is not None:
            current = self.static_members.get(group_instance_id)
            if current is None:
                return errors.UnknownMemberIdError.errno
            if current != member_id:
                return errors.FencedInstanceIdError.errno
        if member_id not in self.members:
            return errors.UnknownMemberIdError.errno
        return 0

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def elect_joined_leader(self) -> bool:
        """Kafka's maybeElectNewJoinedLeader: keep the leader if it rejoined, else the first
        member that did; False when there is no leader or no member rejoined."""
        leader = self.members.get(self.leader_id) if self.leader_id is not None else None
        if leader is None:
            return False
        if leader.awaiting_join is not None:
            return True
        for member in self.members.values():
            if member.awaiting_join is not None:
                self.leader_id = member.member_id
                return True
        return False

    def all_members_joined(self) -> bool:
        return not self.pending_members and all(
            m.awaiting_join is not None for m in self.members.values()
        )

    # -- protocols -------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """Protocols every current member supports."""
        sets = [set(m.protocol_names()) for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports_protocols(self, protocol_type: str, protocols: list[str]) -> bool:
        """May a member with these protocols join (Kafka's supportsProtocols)?"""
        if not protocols or not protocol_type:
            return False
        if not self.members:
            return True
        return protocol_type == self.protocol_type and bool(
            self.candidate_protocols() & set(protocols)
        )

    def select_protocol(self) -> str:
        """The candidate protocol most members prefer (each votes its first candidate)."""
        candidates = self.candidate_protocols()
        if not candidates:
            raise AssertionError(f"group {self.group_id}: no protocol common to all members")
        votes: Counter[str] = Counter()
        for member in self.members.values():
            votes[next(p for p in member.protocol_names() if p in candidates)] += 1
        # Ties go to the protocol the earliest member voted for (Counter keeps insertion order).
        return max(votes, key=lambda name: votes[name])

    # -- answers ---------------------------------------------------------------------------

    def join_response(self, member_id: str, error_code: int = 0) -> JoinResponse:
        """The JoinGroup answer for ``member_id`` in the current generation."""
        is_leader = member_id == self.leader_id
        members = []
        if is_leader and self.protocol_name is not None:
            members = [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "metadata": m.metadata_for(self.protocol_name),
                }
                for m in self.members.values()
            ]
        return {
            "error_code": error_code,
            "generation_id": self.generation_id,
            "protocol_type": self.protocol_type,
            "protocol_name": self.protocol_name or "",
            "leader": self.leader_id or "",
            "member_id": member_id,
            "members": members,
        }
