"""GroupCoordinator: the broker's entry point for consumer groups and committed offsets.

It holds the parts of the group subsystem and answers every request through them:

- :class:`~tiered_mq.broker.group.membership.Membership`: JoinGroup / SyncGroup / Heartbeat /
  LeaveGroup and the group state machine (drawn in :mod:`tiered_mq.broker.group.group`);
- :class:`~tiered_mq.broker.group.offsets.OffsetManager`: committed offsets, cached in memory
  and stored in ``__consumer_offsets`` (formats in :mod:`tiered_mq.broker.group.log_format`);
- :class:`~tiered_mq.broker.group.commits.OffsetCommits`: OffsetCommit and TxnOffsetCommit,
  checked against the group's membership;
- :class:`~tiered_mq.broker.group.admin.GroupAdmin`: ListGroups, DescribeGroups, DeleteGroups,
  OffsetDelete and offset expiration.

All of them share one dict of groups (``Membership.groups``, :attr:`GroupCoordinator.groups`)
and one ``OffsetManager``.

Lifecycle: ``start()`` creates ``__consumer_offsets`` if needed, replays every partition into
the cache, restores the groups it finds (a group with members comes back Stable and its
members must heartbeat within their session timeout, as in Kafka; one with more members than
``group.max.size`` rebalances at once), and starts the offset
expiration task; until it returns, requests are answered COORDINATOR_LOAD_IN_PROGRESS here,
before any of the parts is called. Likewise, while a group's partition of ``__consumer_offsets``
is offline after a storage failure (a full disk, see store_failures.py), its JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and TxnOffsetCommit are answered
NOT_COORDINATOR here (:meth:`available`; FindCoordinator answers COORDINATOR_NOT_AVAILABLE);
OffsetFetch still reads the cache, which holds exactly what is on the log.
``close()`` cancels every timer and task. This broker is the coordinator of every group (one
coordinator per cluster until the internal topic's partitions get leaders elsewhere).

Group metadata (``_store_group``) is appended after every rebalance and every replacement of a
static member's id, and skipped for a group that is Dead or no longer held, so a deleted
group's tombstone stays the last record of its key. Crash behaviour: nothing is kept outside
``__consumer_offsets``; a restart replays it, so acknowledged commits and deletions survive,
while timers and parked requests are lost and the restored members must heartbeat within their
session timeout or be removed.

Transactional offsets: the transaction coordinator calls :meth:`complete_txn` once its
COMMIT/ABORT marker is in the group's ``__consumer_offsets`` partition. Pending offsets are
invisible to OffsetFetch; :meth:`unstable_partitions` names them (Kafka's
UNSTABLE_OFFSET_COMMIT for fetches with ``require_stable``). A group with pending offsets is
never expired to Dead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.admin import GroupAdmin
from tiered_mq.broker.group.commits import OffsetCommits
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.group import GroupMetadata, GroupState, MemberMetadata
from tiered_mq.broker.group.membership import NONE, Membership, join_error
from tiered_mq.broker.group.offsets import OffsetManager
from tiered_mq.broker.group.seams import LoopScheduler, ReplicaManagerLike, Scheduler
from tiered_mq.periodic import schedule
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
        self.commits = OffsetCommits(self.config, self.scheduler, self.offsets, self.membership)
        self.admin = GroupAdmin(self.scheduler, self.offsets, self.membership.groups)
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
            self.membership.rebalance_if_over_capacity(self.groups[group_id])
        for group_id in self.offsets.groups():
            self.groups.setdefault(group_id, GroupMetadata(group_id))
        self.loaded = True
        log.info("group coordinator loaded %d groups", len(self.groups))
        self._expiration_task = asyncio.get_running_loop().create_task(
            schedule(
                "offset expiration",
                self.expire_offsets,
                self.config.offsets_retention_check_interval_ms,
                log,
            ),
            name="group-offset-expiration",
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

    def available(self, group_id: str) -> bool:
        """False while ``group_id``'s partition of ``__consumer_offsets`` is offline after a
        storage failure (store_failures.py): FindCoordinator answers COORDINATOR_NOT_AVAILABLE,
        and the group's requests NOT_COORDINATOR before reaching the group."""
        now = self.scheduler.now_ms()
        return self.offsets.offline.available(self.partition_for(group_id), now)

    async def join_group(self, **kwargs: Any) -> dict[str, Any]:
        if not self.loaded:
            return {"error_code": errors.CoordinatorLoadInProgressError.errno, "members": []}
        if not self.available(kwargs["group_id"]):
            return join_error(errors.NotCoordinatorError.errno, kwargs.get("member_id", ""))
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
        if not self.available(group_id):
            return {"error_code": errors.NotCoordinatorError.errno, "assignment": b""}
        return await self.membership.sync_group(
            group_id, generation_id, member_id, group_instance_id, assignments
        )

    def heartbeat(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno
        if not self.available(group_id):
            return errors.NotCoordinatorError.errno
        return self.membership.heartbeat(group_id, generation_id, member_id, group_instance_id)

    def leave_group(
        self, group_id: str, leaving: list[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, []
        if not self.available(group_id):
            return errors.NotCoordinatorError.errno, []
        return self.membership.leave_group(group_id, leaving)

    # -- offsets ---------------------------------------------------------------------------

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
        if not self.loaded:
            return dict.fromkeys(offsets, errors.CoordinatorLoadInProgressError.errno)
        if not self.available(group_id):
            return dict.fromkeys(offsets, errors.NotCoordinatorError.errno)
        return await self.commits.commit(
            group_id, offsets, retention_time_ms, generation_id, member_id, group_instance_id
        )

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
        if not self.available(group_id):
            raise errors.NotCoordinatorError(f"{group_id}: __consumer_offsets partition offline")
        await self.commits.commit_txn(
            group_id, producer_id, producer_epoch, offsets, generation_id, member_id, instance_id
        )

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
        """Committed offsets (all of the group's when ``partitions`` is None); the empty group
        id is a group like any other here, as in Kafka (see commits.py)."""
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, {}
        return NONE, self.offsets.fetch(group_id, partitions)

    async def expire_offsets(self) -> None:
        """Delete expired offsets; Empty groups left without offsets become Dead."""
        await self.admin.expire_offsets()

    async def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the group's error (no partition errors then) and each partition's;
        returns once the tombstones are on the log."""
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, {}
        return await self.admin.delete_offsets(group_id, partitions)

    async def on_topic_deleted(self, topic: str) -> None:
        """Every group's committed offsets of ``topic`` are tombstoned (topic deletion)."""
        await self.admin.remove_topic_offsets(topic)

    # -- admin -----------------------------------------------------------------------------

    def list_groups(self) -> tuple[int, list[GroupMetadata]]:
        if not self.loaded:
            return errors.CoordinatorLoadInProgressError.errno, []
        return NONE, self.admin.list_groups()

    def describe_group(self, group_id: str) -> dict[str, Any]:
        """One DescribeGroups entry (Kafka: an unknown group is described as Dead, no error)."""
        if not self.loaded:
            error = errors.CoordinatorLoadInProgressError.errno
            return {"error_code": error, "group_id": group_id, "group_state": "", "members": []}
        return self.admin.describe_group(group_id)

    async def delete_groups(self, group_ids: list[str]) -> dict[str, int]:
        if not self.loaded:
            return dict.fromkeys(group_ids, errors.CoordinatorLoadInProgressError.errno)
        results: dict[str, int] = {}
        for group_id in group_ids:
            results[group_id] = await self.admin.delete_group(group_id)
        return results
