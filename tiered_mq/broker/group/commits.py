"""Offset commits: OffsetCommit and TxnOffsetCommit, checked against the group's membership.

Both are checked as Kafka's ClassicGroup.validateOffsetCommit does (:func:`validate_offset_commit`,
order matters): a Dead group answers COORDINATOR_NOT_AVAILABLE; generation -1 on an Empty group
is a "simple" commit (consumers using assign()); otherwise the static instance, the member and
the generation must be current (FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), and
only then does a plain commit during CompletingRebalance answer REBALANCE_IN_PROGRESS. An
unknown group is created by a commit with generation -1 and answered ILLEGAL_GENERATION (and
not created) for any other generation, plain or transactional. The empty group id is a group
like any other for OffsetCommit (Kafka keeps it for backwards compatibility: Java consumers
before 2.2 had ``group.id=""`` by default); a TxnOffsetCommit needs a non-empty one
(INVALID_GROUP_ID), as in Kafka.

Offset commits (:meth:`OffsetCommits.commit`): a commit by a current member counts as its
heartbeat. Metadata longer than ``offset.metadata.max.bytes`` fails that partition alone
(OFFSET_METADATA_TOO_LARGE, nothing stored for it). The answer is sent after the append; an
append refused as too large (RECORD_LIST_TOO_LARGE above the offsets topic's ``segment.bytes``,
MESSAGE_TOO_LARGE above its ``max.message.bytes``, INVALID_FETCH_SIZE) answers
INVALID_COMMIT_OFFSET_SIZE for the partitions it carried, as Kafka's GroupMetadataManager maps
them (:data:`COMMIT_TOO_LARGE`; a client does not retry it), any other failed append Kafka's
error for it (NOT_COORDINATOR on a full disk, see store_failures.py), logged at most once per
group and 30 s with the count of the others.

Transactional offsets (TxnOffsetCommit, :meth:`OffsetCommits.commit_txn`): a request that names
no member (v0-2, or a producer given only a group id) is not checked against the membership,
and the group's state does not matter; then the offsets are appended as a transactional batch
before answering and held pending (``OffsetManager.pending``, see txn_offsets.py) until the
transaction coordinator reports the COMMIT/ABORT marker. Errors are raised as the Kafka error
the client must see: a too-large append as INVALID_COMMIT_OFFSET_SIZE, anything else as
``append_error`` maps it (a storage error as NOT_COORDINATOR, INVALID_PRODUCER_EPOCH as it is).

The coordinator answers COORDINATOR_LOAD_IN_PROGRESS itself until it has loaded, so nothing
here runs before the groups are restored. Everything runs on the event loop; the only await is
the append to ``__consumer_offsets``, and the cache changes only after it returns (offsets.py),
so an offset acknowledged as committed survives a crash and one whose append failed or was cut
short by a crash was never acknowledged.
"""

from __future__ import annotations

import logging

from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.group import GroupMetadata, GroupState
from tiered_mq.broker.group.membership import NONE, Membership
from tiered_mq.broker.group.offsets import OffsetManager
from tiered_mq.broker.group.seams import Scheduler
from tiered_mq.broker.group.store_failures import StoreFailureLog, append_error
from tiered_mq.errors import KafkaError
from tiered_mq.hot.log_config import LONG_MAX
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger("tiered_mq.broker.group.coordinator")  # where these logs always were
S = GroupState

#: errors of the ``__consumer_offsets`` append that a commit answers INVALID_COMMIT_OFFSET_SIZE
#: (Kafka's GroupMetadataManager: the commit is too large for the offsets topic)
COMMIT_TOO_LARGE = (
    errors.MessageTooLargeError,
    errors.RecordListTooLargeError,
    errors.InvalidFetchSizeError,
)


class OffsetCommits:
    """OffsetCommit and TxnOffsetCommit of a loaded coordinator (see the module docstring)."""

    def __init__(
        self,
        config: GroupConfig,
        scheduler: Scheduler,
        offsets: OffsetManager,
        membership: Membership,
    ) -> None:
        self.config = config
        self.scheduler = scheduler
        self.offsets = offsets
        self.membership = membership
        self._failures = StoreFailureLog(log)  # a full disk fails every commit: no flood

    def _commit_error(
        self, group_id: str, generation_id: int, member_id: str, instance_id: str | None
    ) -> tuple[int, GroupMetadata | None]:
        group = self.membership.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                return errors.IllegalGenerationError.errno, None
            return NONE, None  # a simple commit creates the group
        return validate_offset_commit(group, generation_id, member_id, instance_id, False), group

    async def commit(
        self,
        group_id: str,
        offsets: dict[TopicPartition, tuple[int, int, str | None]],
        retention_time_ms: int,
        generation_id: int,
        member_id: str,
        instance_id: str | None,
    ) -> dict[TopicPartition, int]:
        """Commit ``{tp: (offset, leader_epoch, metadata)}`` for the member named last;
        returns each partition's error."""
        error, group = self._commit_error(group_id, generation_id, member_id, instance_id)
        if error:
            return dict.fromkeys(offsets, error)
        now = self.scheduler.now_ms()
        # an explicit retention; the expiry saturates at Long.MAX_VALUE (a huge one: never)
        expire = min(now + retention_time_ms, LONG_MAX) if retention_time_ms >= 0 else -1
        result: dict[TopicPartition, int] = {}
        accepted: dict[TopicPartition, fmt.OffsetValue] = {}
        for tp, (offset, leader_epoch, metadata) in offsets.items():
            if metadata is not None and len(metadata) > self.config.offset_metadata_max_bytes:
                result[tp] = errors.OffsetMetadataTooLargeError.errno
            else:
                accepted[tp] = fmt.OffsetValue(offset, leader_epoch, metadata or "", now, expire)
                result[tp] = NONE
        if group is None:
            group = self.membership.groups.setdefault(group_id, GroupMetadata(group_id))
        member = group.members.get(member_id)
        if member is not None:  # a commit counts as a heartbeat, as in Kafka
            self.membership.schedule_session_timeout(group, member)
        if not accepted:
            return result
        try:
            await self.offsets.commit(group_id, accepted, now)
        except COMMIT_TOO_LARGE as exc:
            log.warning("group %s: offset commit too large: %s", group_id, exc)
            failed = errors.InvalidCommitOffsetSizeError.errno
        except Exception as exc:
            self._failures.failed(group_id, "offset commit append")
            failed = append_error(exc)
        else:
            return result
        return {tp: failed if tp in accepted else code for tp, code in result.items()}

    async def commit_txn(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: dict[TopicPartition, fmt.OffsetValue],
        generation_id: int,
        member_id: str,
        instance_id: str | None,
    ) -> None:
        """Append ``offsets`` as a transactional batch and hold them until the txn ends.

        Raises the Kafka error the client must see (the caller checked the transaction)."""
        if not group_id:
            raise errors.InvalidGroupIdError("empty group id")
        group = self.membership.groups.get(group_id)
        if group is None:
            if generation_id >= 0:  # Kafka: no such generation, and no group is created
                raise errors.IllegalGenerationError(f"group {group_id} does not exist")
            group = self.membership.groups.setdefault(group_id, GroupMetadata(group_id))
        error = validate_offset_commit(group, generation_id, member_id, instance_id, True)
        if error:
            raise errors.for_code(error)(f"group {group_id}: member {member_id!r}")
        if not offsets:
            return
        try:
            await self.offsets.commit_txn(
                group_id, producer_id, producer_epoch, offsets, self.scheduler.now_ms()
            )
        except COMMIT_TOO_LARGE as exc:
            raise errors.InvalidCommitOffsetSizeError(str(exc)) from exc
        except Exception as exc:
            code = append_error(exc)
            if isinstance(exc, KafkaError) and exc.errno == code:
                raise  # e.g. INVALID_PRODUCER_EPOCH, as it is
            self._failures.failed(group_id, "transactional offset commit append")
            raise errors.for_code(code)(str(exc)) from exc


def validate_offset_commit(
    group: GroupMetadata,
    generation_id: int,
    member_id: str,
    instance_id: str | None,
    transactional: bool,
) -> int:
    """Kafka's ClassicGroup.validateOffsetCommit, in its order: a Dead group is not available;
    generation -1 on an Empty group is a simple commit; a request naming a member (or any
    generation) must come from the current holder of its static instance (unknown instance:
    UNKNOWN_MEMBER_ID, another member: FENCED_INSTANCE_ID), from a member of the group and for
    its generation; a plain commit naming none is accepted only by an Empty group (a
    transactional one, v0-2, always). Only then does a plain commit during CompletingRebalance
    answer REBALANCE_IN_PROGRESS, so a zombie learns it is fenced or stale first."""
    if group.state is S.DEAD:
        return errors.CoordinatorNotAvailableError.errno
    if generation_id < 0 and group.state is S.EMPTY:
        return NONE
    if generation_id >= 0 or member_id or instance_id is not None:
        invalid = group.validate_member(member_id, instance_id)
        if invalid:
            return invalid
        if generation_id != group.generation_id:
            return errors.IllegalGenerationError.errno
    elif not transactional and group.state is not S.EMPTY:
        return errors.UnknownMemberIdError.errno
    if not transactional and group.state is S.COMPLETING_REBALANCE:
        return errors.RebalanceInProgressError.errno
    return NONE
