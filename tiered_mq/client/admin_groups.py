"""Consumer group operations of ``Admin``: list, describe (with lag), committed offsets,
alter offsets (outside any generation: only while the group has no members) and DeleteGroups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import confluent_kafka

from tiered_mq.client.admin_base import AdminBase, ck_admin, enum_name, timed_out
from tiered_mq.client.errors import ClientError
from tiered_mq.topic_partition import TopicPartition


def group_type_name(value: object) -> str:
    """librdkafka's ConsumerGroupType (``CLASSIC``, ...; None before ListGroups v5) as Kafka's
    GroupType.toString names it: ``Classic``, ``Consumer``, ``Unknown``."""
    name = enum_name(value) if value is not None else "UNKNOWN"
    return name.capitalize()


@dataclass(frozen=True)
class GroupListing:
    """One group of ``list_groups``. ``group_type`` is the group's type as Kafka's GroupType
    names it (``Classic``, ``Consumer``, ...: what kafka-consumer-groups.sh ``--list --type``
    prints; ListGroups v5+), ``Unknown`` when the broker did not say; ``is_simple``: librdkafka's
    is_simple_consumer_group (no protocol type: offsets committed without joining)."""

    group_id: str
    state: str
    is_simple: bool
    group_type: str = "Unknown"


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class PartitionLag:
    """``lag`` = log end offset - committed offset, as kafka-consumer-groups.sh computes it:
    negative for an offset committed past the log end, None without a committed offset.
    ``log_end_offset`` (and so ``lag``) is None when the partition's leader could not answer
    it (an offline partition has none), as kafka-consumer-groups.sh shows ``-``."""

    topic: str
    partition: int
    committed_offset: int | None
    log_end_offset: int | None
    lag: int | None
    member_id: str | None = None


@dataclass(frozen=True)
class GroupDescription:
    """``coordinator`` is the broker id of the group's coordinator (what FindCoordinator
    answered) and ``coordinator_address`` its ``host:port``; None when librdkafka gave none."""

    group_id: str
    state: str
    protocol: str
    coordinator: int | None
    members: tuple[MemberDescription, ...]
    offsets: tuple[PartitionLag, ...]
    coordinator_address: str | None = None


class GroupAdmin(AdminBase):
    def list_groups(self) -> list[GroupListing]:
        """Every consumer group, with its state.

        ListGroups reports states from v4 (this broker serves up to v5); for a group listed
        without one (a broker that stops below v4), the state comes from one DescribeGroups
        request for all such groups.
        """
        future = self._admin.list_consumer_groups(request_timeout=self._timeout)
        result = self._result(future, "list groups")
        if result.errors:  # a broker that did not answer in time is a time-out too
            first = result.errors[0]
            if first.code() == confluent_kafka.KafkaError._TIMED_OUT:
                raise timed_out("list groups", self._timeout)
            raise ClientError.wrap(first, "list groups")
        states = {g.group_id: enum_name(g.state) for g in result.valid}
        unknown = [gid for gid, state in states.items() if state == "UNKNOWN"]
        if unknown:
            futures = self._admin.describe_consumer_groups(unknown, request_timeout=self._timeout)
            for gid, fut in futures.items():
                try:
                    states[gid] = enum_name(fut.result(self._timeout).state)
                except (confluent_kafka.KafkaException, TimeoutError):
                    pass  # keep UNKNOWN: listing must not fail because one group is busy
        return sorted(
            (
                GroupListing(
                    g.group_id,
                    states[g.group_id],
                    bool(g.is_simple_consumer_group),
                    group_type_name(g.type),
                )
                for g in result.valid
            ),
            key=lambda g: g.group_id,
        )

    def describe_group(self, group_id: str) -> GroupDescription:
        futures = self._admin.describe_consumer_groups([group_id], request_timeout=self._timeout)
        desc = self._result(futures[group_id], f"describe group {group_id}")
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                client_id=m.client_id,
                host=m.host,
                assignment=tuple(
                    TopicPartition(tp.topic, tp.partition)
                    for tp in (m.assignment.topic_partitions if m.assignment else [])
                ),
            )
            for m in desc.members
        )
        owner = {tp: m.member_id for m in members for tp in m.assignment}
        committed: dict[TopicPartition, int | None] = dict(self.committed_offsets(group_id))
        for tp in owner:
            committed.setdefault(tp, None)
        ends = self._log_end_offsets(sorted(committed))
        lags = tuple(
            PartitionLag(
                topic=tp.topic,
                partition=tp.partition,
                committed_offset=c,
                log_end_offset=end,
                lag=None if c is None or end is None else end - c,
                member_id=owner.get(tp),
            )
            for tp, c in sorted(committed.items())
            for end in (ends[tp],)
        )
        node = desc.coordinator
        return GroupDescription(
            group_id=group_id,
            state=enum_name(desc.state),
            protocol=desc.partition_assignor or "",
            coordinator=node.id if node is not None else None,
            members=members,
            offsets=lags,
            coordinator_address=f"{node.host}:{node.port}" if node is not None else None,
        )

    def _log_end_offsets(
        self, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """The log end offset of each partition, None for one whose ListOffsets failed (an
        offline partition: LEADER_NOT_AVAILABLE), as kafka-consumer-groups.sh shows an offset
        it could not look up as ``-``. A time-out is raised: the broker did not answer."""
        if not partitions:
            return {}
        latest = ck_admin.OffsetSpec.latest()
        query = {confluent_kafka.TopicPartition(t, p): latest for t, p in partitions}
        futures = self._admin.list_offsets(query, request_timeout=self._timeout)
        ends: dict[TopicPartition, int | None] = {}
        for tp, future in futures.items():
            context = f"list offsets {tp.topic}-{tp.partition}"
            try:
                ends[TopicPartition(tp.topic, tp.partition)] = int(
                    self._result(future, context).offset
                )
            except ClientError as exc:
                if exc.name == "_TIMED_OUT":
                    raise
                ends[TopicPartition(tp.topic, tp.partition)] = None
        return ends

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (OffsetFetch of all its partitions)."""
        request = [confluent_kafka.ConsumerGroupTopicPartitions(group_id)]
        futures = self._admin.list_consumer_group_offsets(request, request_timeout=self._timeout)
        found = self._result(futures[group_id], f"committed offsets of {group_id}")
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in found.topic_partitions
            if tp.error is None and tp.offset >= 0
        }

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commits ``offsets`` for the group (OffsetCommit, outside any generation): the
        broker takes them only while the group has no members."""
        request = confluent_kafka.ConsumerGroupTopicPartitions(
            group_id,
            [confluent_kafka.TopicPartition(t, p, o) for (t, p), o in offsets.items()],
        )
        futures = self._admin.alter_consumer_group_offsets([request], request_timeout=self._timeout)
        context = f"alter offsets of {group_id}"
        for tp in self._result(futures[group_id], context).topic_partitions:
            if tp.error is not None:
                raise ClientError.from_kafka_error(
                    tp.error, f"{context}: {tp.topic}-{tp.partition}"
                )

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, ClientError | None]:
        """DeleteGroups: each group's error (None when deleted with its committed offsets).

        The broker deletes only a group without members: NON_EMPTY_GROUP otherwise, and
        GROUP_ID_NOT_FOUND for a group it does not know.
        """
        futures = self._admin.delete_consumer_groups(list(group_ids), request_timeout=self._timeout)
        errors: dict[str, ClientError | None] = {}
        for group_id, future in futures.items():
            try:
                self._result(future, f"delete group {group_id}")
                errors[group_id] = None
            except ClientError as err:
                if err.code < 0:  # local (timeout, transport): no answer about this group
                    raise
                errors[group_id] = err
        return errors
