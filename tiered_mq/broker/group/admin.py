"""Group administration: ListGroups, DescribeGroups, and removing groups and their offsets.

Reads: ListGroups lists every group but the Dead ones; DescribeGroups describes an unknown
group as Dead without an error (as Kafka does) and shows the selected protocol
(``protocol_data``) and the members' metadata only while the group is Stable, the members'
assignments in every state (Kafka's describeNoMetadata outside Stable).

Removal, in three ways, each appending tombstones to ``__consumer_offsets`` through
:class:`~tiered_mq.broker.group.offsets.OffsetManager` (the cache drops what the tombstones
delete only once they are on the log):

- DeleteGroups (:meth:`GroupAdmin.delete_group`): only an Empty group; it becomes Dead and is
  forgotten at once, then its offsets (pending transactional ones too, which the transaction's
  COMMIT then does not bring back: offsets.py) and metadata are tombstoned. A failed append answers
  COORDINATOR_NOT_AVAILABLE; the group stays forgotten but its offsets stay cached, and its
  records bring it back at the next start, as after a crash before the append.
- OffsetDelete (:meth:`GroupAdmin.delete_offsets`, Kafka's handleDeleteOffsets): an Empty
  group may lose any offset; a ``consumer`` group with members only those of topics no member
  subscribes to (the others answer GROUP_SUBSCRIBED_TO_TOPIC, see consumer_protocol.py); any
  other group with members answers NON_EMPTY_GROUP. A partition without a committed offset
  succeeds. The answer is sent after the tombstones are appended.
- Expiration (:meth:`GroupAdmin.expire_offsets`, retention rules in offsets.py): an Empty
  group's offsets, and a Stable consumer group's offsets of topics no member subscribes to.

After OffsetDelete and expiration an Empty group left without offsets becomes Dead and is
forgotten, its metadata tombstoned (Kafka's cleanupGroupMetadata); if that append fails the
metadata record stays, and the group is reloaded Empty at the next start and expires again.
A group leaves ``groups`` only after its transition to Dead and before its tombstone is
appended; the coordinator's ``_store_group`` skips such a group, so no group metadata write
scheduled earlier lands after the tombstone.

The coordinator answers COORDINATOR_LOAD_IN_PROGRESS itself until it has loaded, so nothing
here runs before the groups are restored. Everything runs on the event loop; the only awaits
are the appends.
"""

from __future__ import annotations

import logging
from typing import Any

from tiered_mq import errors
from tiered_mq.broker.group.consumer_protocol import PROTOCOL_TYPE, subscribed_topics
from tiered_mq.broker.group.group import GroupMetadata, GroupState
from tiered_mq.broker.group.membership import NONE
from tiered_mq.broker.group.offsets import ExpiryRule, OffsetManager
from tiered_mq.broker.group.seams import Scheduler
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger("tiered_mq.broker.group.coordinator")  # where these logs always were
S = GroupState


class GroupAdmin:
    """Listing, describing and removing the groups of a loaded coordinator (see the module
    docstring); ``groups`` is the coordinator's own dict (``Membership.groups``)."""

    def __init__(
        self, scheduler: Scheduler, offsets: OffsetManager, groups: dict[str, GroupMetadata]
    ) -> None:
        self.scheduler = scheduler
        self.offsets = offsets
        self.groups = groups

    def list_groups(self) -> list[GroupMetadata]:
        return [g for g in self.groups.values() if g.state is not S.DEAD]

    def describe_group(self, group_id: str) -> dict[str, Any]:
        """One DescribeGroups entry (Kafka: an unknown group is described as Dead, no error)."""
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
        # Kafka (GroupMetadataManager.describeGroups): the protocol and each member's metadata
        # only while Stable; the assignment in every state (empty until a SyncGroup stored one).
        protocol = group.protocol_name if group.state is S.STABLE else None
        members = [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata_for(protocol) if protocol else b"",
                "member_assignment": m.assignment,
            }
            for m in group.members.values()
        ]
        return {
            "error_code": NONE,
            "group_id": group_id,
            "group_state": group.state.value,
            "protocol_type": group.protocol_type or "",
            "protocol_data": protocol or "",
            "members": members,
        }

    async def delete_group(self, group_id: str) -> int:
        """One DeleteGroups entry: the group's error code (the empty group id is a group like
        any other here, as in Kafka: its offsets can be deleted)."""
        group = self.groups.get(group_id)
        if group is None or group.state is S.DEAD:
            return errors.GroupIdNotFoundError.errno
        if group.state is not S.EMPTY:
            return errors.NonEmptyGroupError.errno
        try:
            await self._forget(group)
        except Exception:
            log.exception("group %s: writing tombstones failed", group_id)
            return errors.CoordinatorNotAvailableError.errno
        return NONE

    async def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the group's error (no partition errors then) and each partition's;
        returns once the tombstones are on the log."""
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

    async def remove_topic_offsets(self, topic: str) -> None:
        """A deleted topic's committed offsets leave every group (Kafka's
        ``onPartitionsDeleted``): a topic created again under the name starts with none, so
        its consumers do not skip records at the old offsets. Groups left Empty without
        offsets become Dead."""
        now_ms = self.scheduler.now_ms()
        for group_id, doomed in self.offsets.topic_offsets(topic).items():
            await self.offsets.delete_offsets(group_id, doomed, now_ms)
            log.info("group %s: offsets of deleted topic %s removed", group_id, topic)
            group = self.groups.get(group_id)
            if group is not None:
                await self._maybe_forget_group(group)

    async def expire_offsets(self) -> None:
        """Delete expired offsets; Empty groups left without offsets become Dead."""
        await self.offsets.expire_offsets(self.scheduler.now_ms(), self._expiry_rule)
        for group in list(self.groups.values()):
            await self._maybe_forget_group(group)

    def _expiry_rule(self, group_id: str) -> ExpiryRule | None:
        """Kafka's offset expiration condition of a classic group: Empty (or only offsets
        known), every offset, counted from when it became empty; Stable ``consumer`` group
        whose subscriptions decode, the offsets of topics no member subscribes to, counted
        from their commit; otherwise none."""
        group = self.groups.get(group_id)
        if group is None:
            return ExpiryRule()
        if group.state is S.EMPTY:
            return ExpiryRule(since=group.state_timestamp_ms)
        if group.state is S.STABLE:
            subscribed = subscribed_topics(group)
            if subscribed is not None:
                return ExpiryRule(kept_topics=frozenset(subscribed))
        return None

    async def _maybe_forget_group(self, group: GroupMetadata) -> None:
        """An Empty group without offsets becomes Dead and is forgotten, its metadata
        tombstoned (Kafka's cleanupGroupMetadata)."""
        group_id = group.group_id
        if self.groups.get(group_id) is not group or group.state is not S.EMPTY:
            return
        if self.offsets.has_offsets(group_id):
            return
        await self._forget(group)

    async def _forget(self, group: GroupMetadata) -> None:
        """Dead and out of ``groups`` at once, then its offsets and metadata tombstoned."""
        group.transition_to(S.DEAD, self.scheduler.now_ms())
        del self.groups[group.group_id]
        await self.offsets.delete_group(group.group_id, self.scheduler.now_ms())
