"""GroupCoordinator: the broker's entry point for consumer groups and committed offsets.

It joins the two halves of the group subsystem:

- :class:`~tiered_mq.broker.group.membership.Membership`: JoinGroup / SyncGroup / Heartbeat /
  LeaveGroup and the group state machine (drawn in :mod:`tiered_mq.broker.group.group`);
- :class:`~tiered_mq.broker.group.offsets.OffsetManager`: committed offsets, cached in memory
  and stored in ``__consumer_offsets`` (formats in :mod:`tiered_mq.broker.group.log_format`).

Lifecycle: ``start()`` creates ``__consumer_offsets`` if needed, replays every partition into
the cache, restores the groups it finds (a group with members comes back Stable and its
members must heartbeat within their session timeout, as in Kafka), and starts the offset
expiration task; until it returns, requests are answered COORDINATOR_LOAD_IN_PROGRESS.
``close()`` cancels every timer and task. This broker is the coordinator of every group (one
coordinator per cluster until the internal topic's partitions get leaders elsewhere).

Offset commits follow Kafka's rules: generation -1 on a group without members is a "simple"
commit (consumers using assign()); otherwise the member and generation must be current, and
CompletingRebalance answers REBALANCE_IN_PROGRESS. The answer is sent after the append.

Transactional offsets (TxnOffsetCommit): :meth:`txn_offset_commit` checks the committing
consumer's membership when the request names one (v3+, KIP-447; v0-2 carry none), then appends
the offsets as a transactional batch before answering and holds them pending
(``OffsetManager.pending``, see txn_offsets.py); the transaction coordinator calls
:meth:`complete_txn` once its COMMIT/ABORT marker is in the group's ``__consumer_offsets``
partition. Pending offsets are invisible to OffsetFetch; :meth:`unstable_partitions` names them
(Kafka's UNSTABLE_OFFSET_COMMIT for fetches with ``require_stable``). A group with pending
offsets is never expired to Dead.

OffsetDelete (:meth:`delete_offsets`, Kafka's handleDeleteOffsets): an Empty group may lose
any offset; a ``consumer`` group with members only those of topics no member subscribes to
(the others answer GROUP_SUBSCRIBED_TO_TOPIC, see consumer_protocol.py); any other group with
members answers NON_EMPTY_GROUP. A partition without a committed offset succeeds. The answer
is sent after the tombstones are appended; an Empty group left without offsets then becomes
Dead and is forgotten, as when its offsets expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.consumer_protocol import PROTOCOL_TYPE, subscribed_topics
from tiered_mq.broker.group.group import GroupMetadata, GroupState, MemberMetadata
from tiered_mq.broker.group.membership import FENCED_INSTANCE_ID, NONE, Membership
from tiered_mq.broker.group.offsets import OffsetManager
from tiered_mq.broker.group.seams import LoopScheduler, ReplicaManagerLike, Scheduler
from tiered_mq.errors import KafkaError
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
S = GroupState

T = TypeVar("T")


def _snapshot(read: Callable[[], list[T]], attempts: int = 5) -> list[T]:
    """``read()`` from a thread other than the loop's: a dict the loop resizes meanwhile
    raises RuntimeError, and the read is tried again (an empty list after ``attempts``)."""
    for _ in range(attempts):
        try:
            return read()
        except RuntimeError:
            continue
    return []


class GroupCoordinator:
    def __init__(
        self,
        replica_manager: ReplicaManagerLike,
        config: Any,
        scheduler: Scheduler | None = None,
    ) -> None:
        self.config = (
            config if isinstance(config, GroupConfig) else GroupConfig.from_broker_config(config)
        )
        self.scheduler: Scheduler = scheduler or LoopScheduler()
        self.offsets = OffsetManager(replica_manager, self.config)
        self.membership = Membership(self.config, self.scheduler, self._store_group)
        self.loaded = False
        self._expiration_task: asyncio.Task[None] | None = None

    @property
    def groups(self) -> dict[str, GroupMetadata]:
        return self.membership.groups

    def committed_offsets(self) -> list[tuple[str, TopicPartition, int]]:
        """(group, partition, committed offset) of every group, a snapshot safe to take from
        another thread (the metrics endpoint): copied with retries while the loop mutates."""
        return _snapshot(
            lambda: [
                (group, tp, value.offset)
                for group in list(self.offsets.groups())
                for tp, value in self.offsets.fetch(group).items()
            ]
        )

    def member_counts(self) -> list[tuple[str, int]]:
        """(group, number of members) of every group the coordinator holds; a snapshot as
        :meth:`committed_offsets`."""
        return _snapshot(lambda: [(g.group_id, len(g.members)) for g in list(self.groups.values())])

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.offsets.start()
        for group_id, value in self.offsets.loaded_groups.items():
            self._restore_group(group_id, value)
        for group_id in self.offsets.groups():
            self.groups.setdefault(group_id, GroupMetadata(group_id))
        self.loaded = True
        log.info("group coordinator loaded %d groups", len(self.groups))
        self._expiration_task = asyncio.get_running_loop().create_task(
            self._offset_expiration_loop(), name="group-offset-expiration"
        )

    async def close(self) -> None:
        if self._expiration_task is not None:
            self._expiration_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._expiration_task
        await self.membership.close()

    def _restore_group(self, group_id: str, value: fmt.GroupValue) -> None:
        group = GroupMetadata(
            group_id,
            generation_id=value.generation,
            protocol_type=value.protocol_type or None,
            state_timestamp_ms=value.current_state_timestamp,
        )
        self.groups[group_id] = group
        if not value.members or value.protocol is None:
            return
        for m in value.members:
            member = MemberMetadata(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                value.protocol_type,
                [(value.protocol, m.subscription)],
                assignment=m.assignment,
                is_new=False,
            )
            group.add(member)
            self.membership.schedule_session_timeout(group, member)
        group.protocol_name = value.protocol
        group.leader_id = value.leader if value.leader in group.members else group.leader_id
        group.state = S.STABLE

    async def _store_group(self, group: GroupMetadata) -> None:
        if group.state is S.DEAD or self.groups.get(group.group_id) is not group:
            return  # deleted after this write was scheduled: its tombstone must stay last
        protocol = group.protocol_name
        value = fmt.GroupValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=protocol,
            leader=group.leader_id,
            current_state_timestamp=self.scheduler.now_ms(),
            members=[
                fmt.MemberValue(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.metadata_for(protocol) if protocol else b"",
                    m.assignment,
                )
                for m in group.members.values()
            ],
        )
        await self.offsets.store_group(group.group_id, value, self.scheduler.now_ms())

    # -- membership ------------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        return self.offsets.partition_for(group_id).partition

    async def join_group(self, **kwargs: Any) -> dict[str, Any]:
        if not self.loaded:
            return {"error_code": errors.CoordinatorLoadInProgressError.errno, "members": []}
        return await self.membership.join_group(**kwargs)

    async def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
    ) -> dict[str, Any]:
        if not self.loaded:
            return {"error_code": errors.CoordinatorLoadInProgressError.errno}
        return await self.membership.sync_group(
            group_id, generation_id, member_id, group_instance_id, assignments
        )

    def heartbeat(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno
        return self.membership.heartbeat(group_id, generation_id, member_id, group_instance_id)

    def leave_group(
        self, group_id: str, leaving: list[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, []
        return self.membership.leave_group(group_id, leaving)

    # -- offsets ---------------------------------------------------------------------------

    def _commit_error(
        self, group_id: str, generation_id: int, member_id: str, instance_id: str | None
    ) -> tuple[int, GroupMetadata | None]:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, None
        if not group_id:
            return errors.InvalidGroupIdError.errno, None
        group = self.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                return errors.IllegalGenerationError.errno, None
            return NONE, None  # a simple commit creates the group
        if group.state is S.DEAD:
            return errors.CoordinatorNotAvailableError.errno, group
        if generation_id < 0 and group.state is S.EMPTY:
            return NONE, group
        if instance_id is not None and group.static_members.get(instance_id, member_id) != (
            member_id
        ):
            return FENCED_INSTANCE_ID, group
        if group.state is S.COMPLETING_REBALANCE:
            return errors.RebalanceInProgressError.errno, group
        if member_id not in group.members:
            return errors.UnknownMemberIdError.errno, group
        if generation_id != group.generation_id:
            return errors.IllegalGenerationError.errno, group
        return NONE, group

    async def commit_offsets(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        retention_time_ms: int,
        offsets: dict[TopicPartition, tuple[int, int, str | None]],
    ) -> dict[TopicPartition, int]:
        """Commit ``{tp: (offset, leader_epoch, metadata)}``; returns each partition's error."""
        error, group = self._commit_error(group_id, generation_id, member_id, group_instance_id)
        if error:
            return dict.fromkeys(offsets, error)
        now = self.scheduler.now_ms()
        expire = now + retention_time_ms if retention_time_ms >= 0 else -1
        result: dict[TopicPartition, int] = {}
        accepted: dict[TopicPartition, fmt.OffsetValue] = {}
        for tp, (offset, leader_epoch, metadata) in offsets.items():
            if metadata is not None and len(metadata) > self.config.offset_metadata_max_bytes:
                result[tp] = errors.OffsetMetadataTooLargeError.errno
            else:
                accepted[tp] = fmt.OffsetValue(offset, leader_epoch, metadata or "", now, expire)
                result[tp] = NONE
        if group is None:
            group = self.groups.setdefault(group_id, GroupMetadata(group_id))
        member = group.members.get(member_id)
        if member is not None:  # a commit counts as a heartbeat, as in Kafka
            self.membership.schedule_session_timeout(group, member)
        if accepted:
            try:
                await self.offsets.commit(group_id, accepted, now)
            except Exception:
                log.exception("group %s: offset commit append failed", group_id)
                failed = errors.CoordinatorNotAvailableError.errno
                return {tp: failed if tp in accepted else code for tp, code in result.items()}
        return result

    async def txn_offset_commit(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: dict[TopicPartition, fmt.OffsetValue],
        generation_id: int = -1,
        member_id: str = "",
        instance_id: str | None = None,
    ) -> None:
        """Append ``offsets`` as a transactional batch and hold them until the txn ends.

        Raises the Kafka error the client must see (the caller checked the transaction)."""
        if not self.loaded:
            raise errors.CoordinatorLoadInProgressError("group coordinator loading")
        if not group_id:
            raise errors.InvalidGroupIdError("empty group id")
        group = self.groups.setdefault(group_id, GroupMetadata(group_id))
        if group.state is S.DEAD:
            raise errors.CoordinatorNotAvailableError(f"group {group_id} is dead")
        error = _txn_member_error(group, generation_id, member_id, instance_id)
        if error:
            raise errors.for_code(error)(f"group {group_id}: member {member_id!r}")
        if not offsets:
            return
        try:
            await self.offsets.commit_txn(
                group_id, producer_id, producer_epoch, offsets, self.scheduler.now_ms()
            )
        except KafkaError:
            raise
        except Exception as exc:
            log.exception("group %s: transactional offset commit append failed", group_id)
            raise errors.CoordinatorNotAvailableError(str(exc)) from exc

    def complete_txn(self, producer_id: int, commit: bool, partition: int) -> None:
        """The COMMIT/ABORT marker of ``producer_id`` is in ``__consumer_offsets``
        ``partition``: materialize or drop its pending offsets of the groups there."""
        self.offsets.complete_txn(producer_id, commit, partition)

    def unstable_partitions(self, group_id: str) -> set[TopicPartition]:
        """Partitions of ``group_id`` with transactional offsets not yet committed/aborted."""
        return self.offsets.pending.unstable(group_id)

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None
    ) -> tuple[int, dict[TopicPartition, fmt.OffsetValue]]:
        """Committed offsets (all of the group's when ``partitions`` is None)."""
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, {}
        if not group_id:
            return errors.InvalidGroupIdError.errno, {}
        return NONE, self.offsets.fetch(group_id, partitions)

    async def _offset_expiration_loop(self) -> None:
        interval = self.config.offsets_retention_check_interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.expire_offsets()
            except Exception:
                log.exception("offset expiration failed")

    async def expire_offsets(self) -> None:
        """Delete expired offsets; Empty groups left without offsets become Dead."""

        def empty_since(group_id: str) -> int | None:
            group = self.groups.get(group_id)
            if group is None:
                return -1
            return group.state_timestamp_ms if group.state is S.EMPTY else None

        await self.offsets.expire_offsets(self.scheduler.now_ms(), empty_since)
        for group in list(self.groups.values()):
            await self._maybe_forget_group(group)

    async def _maybe_forget_group(self, group: GroupMetadata) -> None:
        """An Empty group without offsets becomes Dead and is forgotten, its metadata
        tombstoned (Kafka's cleanupGroupMetadata)."""
        group_id = group.group_id
        if self.groups.get(group_id) is not group or group.state is not S.EMPTY:
            return
        if self.offsets.has_offsets(group_id):
            return
        group.transition_to(S.DEAD, self.scheduler.now_ms())
        del self.groups[group_id]
        await self.offsets.delete_group(group_id, self.scheduler.now_ms())

    async def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the group's error (no partition errors then) and each partition's;
        returns once the tombstones are on the log."""
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, {}
        if not group_id:
            return errors.InvalidGroupIdError.errno, {}
        group = self.groups.get(group_id)
        if group is None or group.state is S.DEAD:
            return errors.GroupIdNotFoundError.errno, {}
        result: dict[TopicPartition, int] = {}
        if group.state is not S.EMPTY:
            if group.protocol_type != PROTOCOL_TYPE:
                return errors.NonEmptyGroupError.errno, {}
            subscribed = subscribed_topics(group) or set()
            in_use = errors.GroupSubscribedToTopicError.errno
            result = {tp: in_use for tp in partitions if tp.topic in subscribed}
        deletable = [tp for tp in partitions if tp not in result]
        if not deletable:
            return NONE, result
        try:
            deleted = await self.offsets.delete_offsets(
                group_id, deletable, self.scheduler.now_ms()
            )
        except Exception:
            log.exception("group %s: writing offset tombstones failed", group_id)
            return errors.CoordinatorNotAvailableError.errno, {}
        log.info("group %s: deleted the offsets of %d partitions", group_id, len(deleted))
        try:
            await self._maybe_forget_group(group)
        except Exception:  # its metadata record stays: reloaded Empty, it expires again
            log.exception("group %s: tombstoning the emptied group failed", group_id)
        return NONE, result | dict.fromkeys(deletable, NONE)

    # -- admin -----------------------------------------------------------------------------

    def list_groups(self) -> tuple[int, list[GroupMetadata]]:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, []
        return NONE, [g for g in self.groups.values() if g.state is not S.DEAD]

    def describe_group(self, group_id: str) -> dict[str, Any]:
        """One DescribeGroups entry (Kafka: an unknown group is described as Dead, no error)."""
        if not self.loaded:
            error = errors.CoordinatorLoadInProgressError.errno
            return {"error_code": error, "group_id": group_id, "group_state": "", "members": []}
        group = self.groups.get(group_id)
        if group is None:
            return {
                "error_code": NONE,
                "group_id": group_id,
                "group_state": "Dead",
                "protocol_type": "",
                "protocol_data": "",
                "members": [],
            }
        protocol = group.protocol_name if group.state is S.STABLE else None
        members = [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata_for(protocol) if protocol else b"",
                "member_assignment": m.assignment if protocol else b"",
            }
            for m in group.members.values()
        ]
        return {
            "error_code": NONE,
            "group_id": group_id,
            "group_state": group.state.value,
            "protocol_type": group.protocol_type or "",
            "protocol_data": group.protocol_name or "",
            "members": members,
        }

    async def delete_groups(self, group_ids: list[str]) -> dict[str, int]:
        results: dict[str, int] = {}
        for group_id in group_ids:
            results[group_id] = await self._delete_group(group_id)
        return results

    async def _delete_group(self, group_id: str) -> int:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno
        if not group_id:
            return errors.InvalidGroupIdError.errno
        group = self.groups.get(group_id)
        if group is None or group.state is S.DEAD:
            return errors.GroupIdNotFoundError.errno
        if group.state is not S.EMPTY:
            return errors.NonEmptyGroupError.errno
        group.transition_to(S.DEAD, self.scheduler.now_ms())
        del self.groups[group_id]
        try:
            await self.offsets.delete_group(group_id, self.scheduler.now_ms())
        except Exception:
            log.exception("group %s: writing tombstones failed", group_id)
            return errors.CoordinatorNotAvailableError.errno
        return NONE


def _txn_member_error(
    group: GroupMetadata, generation_id: int, member_id: str, instance_id: str | None
) -> int:
    """Kafka's membership check of a TxnOffsetCommit (GroupCoordinator.validateOffsetCommit
    for a transactional commit): none when the request names no member (v0-2, or a producer
    given only a group id); else the member (and its static instance) must be current and the
    generation the group's, so a zombie of an old generation cannot commit."""
    if generation_id < 0 and not member_id and instance_id is None:
        return NONE
    if instance_id is not None:
        current = group.static_members.get(instance_id)
        if current is None:
            return errors.UnknownMemberIdError.errno
        if current != member_id:
            return FENCED_INSTANCE_ID
    elif member_id not in group.members:
        return errors.UnknownMemberIdError.errno
    if generation_id != group.generation_id:
        return errors.IllegalGenerationError.errno
    return NONE
