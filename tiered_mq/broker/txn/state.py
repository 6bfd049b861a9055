"""Transaction metadata of one transactional id and its state machine (Kafka's rules).

States and the transitions the coordinator makes::

    (none) --InitProducerId--> Empty
    Empty | CompleteCommit | CompleteAbort --AddPartitions/AddOffsets--> Ongoing
    Ongoing --EndTxn(commit)--> PrepareCommit --markers written--> CompleteCommit
    Ongoing --EndTxn(abort), InitProducerId (fencing), timeout--> PrepareAbort
    PrepareAbort --markers written--> CompleteAbort
    Empty | Complete* --InitProducerId--> Empty with the epoch bumped

A Prepare* state is logged before any marker is written, so after a crash the coordinator
completes it (writes the markers again: they are idempotent for the reader) on load.
The functions here are pure: they check a request against the metadata and return the new
metadata or raise the Kafka error the client must see; the coordinator logs and applies it.
Fencing raises INVALID_PRODUCER_EPOCH, which every version knows; the handlers of
AddPartitionsToTxn, AddOffsetsToTxn and EndTxn answer it PRODUCER_FENCED from v2, as Kafka
(handlers/_txn.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final

from tiered_mq import errors
from tiered_mq.topic_partition import TopicPartition

MAX_EPOCH: Final = 32766  # Kafka bumps to a new producer id past this


class TxnState(IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7


PREPARING: Final = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE)
IDLE: Final = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


@dataclass(frozen=True, slots=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1

    def replace(self, **changes: object) -> TxnMetadata:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def expired(self, now_ms: int) -> bool:
        return self.state is TxnState.ONGOING and now_ms > self.start_ms + self.timeout_ms


def check_producer(meta: TxnMetadata, producer_id: int, producer_epoch: int) -> None:
    if producer_id != meta.producer_id:
        raise errors.InvalidProducerIdMappingError(
            f"{meta.transactional_id}: producer id {producer_id} is not {meta.producer_id}"
        )
    if producer_epoch != meta.producer_epoch:
        raise errors.InvalidProducerEpochError(
            f"{meta.transactional_id}: epoch {producer_epoch} fenced by {meta.producer_epoch}"
        )


def init_existing(meta: TxnMetadata, timeout_ms: int, now_ms: int) -> TxnMetadata:
    """InitProducerId on an idle transactional id: the epoch is bumped (fencing zombies).

    An ongoing transaction must be aborted first (:func:`fence_and_abort`); Prepare* states
    answer CONCURRENT_TRANSACTIONS (the client retries)."""
    if meta.state in PREPARING or meta.state is TxnState.ONGOING:
        raise errors.ConcurrentTransactionsError(f"{meta.transactional_id}: {meta.state.name}")
    return meta.replace(
        producer_epoch=meta.producer_epoch + 1,
        timeout_ms=timeout_ms,
        state=TxnState.EMPTY,
        partitions=set(),
        start_ms=-1,
        last_update_ms=now_ms,
    )


def needs_new_producer_id(meta: TxnMetadata) -> bool:
    return meta.producer_epoch >= MAX_EPOCH


def fence_and_abort(meta: TxnMetadata, now_ms: int) -> TxnMetadata:
    """Ongoing -> PrepareAbort with the epoch bumped (InitProducerId of a new instance, or a
    timed-out transaction): the old producer is fenced and its transaction aborted."""
    if meta.state is not TxnState.ONGOING:
        raise errors.InvalidTxnStateError(f"{meta.transactional_id}: {meta.state.name}")
    return meta.replace(
        producer_epoch=meta.producer_epoch + 1, state=TxnState.PREPARE_ABORT, last_update_ms=now_ms
    )


def add_partitions(
    meta: TxnMetadata,
    producer_id: int,
    producer_epoch: int,
    partitions: Iterable[TopicPartition],
    now_ms: int,
) -> TxnMetadata:
    check_producer(meta, producer_id, producer_epoch)
    if meta.state in PREPARING:
        raise errors.ConcurrentTransactionsError(f"{meta.transactional_id}: {meta.state.name}")
    if meta.state is TxnState.DEAD:
        raise errors.InvalidTxnStateError(f"{meta.transactional_id}: dead")
    ongoing = meta.state is TxnState.ONGOING
    return meta.replace(
        state=TxnState.ONGOING,
        partitions=(meta.partitions if ongoing else set()) | set(partitions),
        start_ms=meta.start_ms if ongoing else now_ms,
        last_update_ms=now_ms,
    )


def end_txn(
    meta: TxnMetadata, producer_id: int, producer_epoch: int, commit: bool, now_ms: int
) -> TxnMetadata | None:
    """EndTxn: the Prepare* metadata to log, or None for a retry of a completed end."""
    check_producer(meta, producer_id, producer_epoch)
    state = meta.state
    if state is TxnState.ONGOING:
        target = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        return meta.replace(state=target, last_update_ms=now_ms)
    done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
    if state is done:
        return None
    preparing = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
    if state is preparing:
        raise errors.ConcurrentTransactionsError(f"{meta.transactional_id}: {state.name}")
    raise errors.InvalidTxnStateError(
        f"{meta.transactional_id}: cannot {'commit' if commit else 'abort'} in {state.name}"
    )


def complete(meta: TxnMetadata, now_ms: int) -> TxnMetadata:
    """Prepare* -> Complete* once every marker is written."""
    if meta.state is TxnState.PREPARE_COMMIT:
        target = TxnState.COMPLETE_COMMIT
    elif meta.state is TxnState.PREPARE_ABORT:
        target = TxnState.COMPLETE_ABORT
    else:
        raise errors.InvalidTxnStateError(f"{meta.transactional_id}: {meta.state.name}")
    return meta.replace(state=target, partitions=set(), last_update_ms=now_ms)
