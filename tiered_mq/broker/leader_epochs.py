"""Leader epochs of a partition, as Kafka's Partition and LeaderEpochFileCache use them.

A partition's current leader epoch (``Partition.leader_epoch``) comes from its partition state
(coordination/base.py ``PartitionState``): 0 for a topic this broker created, whatever another
tool wrote in ZooKeeper's state znode otherwise; it only moves forward, when the state's epoch
rises (broker/metadata_changes.py, Kafka's makeLeader). Every batch appended is stamped with the
current epoch (its ``partitionLeaderEpoch``), so the epochs of a log never decrease from one
batch to the next; there is no leader-epoch-checkpoint file: the batch headers are the record.

- :func:`check_current_epoch`: the ``current_leader_epoch`` a client sends with Fetch (v9+),
  ListOffsets (v4+) and OffsetForLeaderEpoch (v2+), checked per partition as Kafka's
  ``Partition.localLogWithEpochOrThrow``: a negative one is not checked; one below the
  partition's epoch is FENCED_LEADER_EPOCH (the client's metadata is stale: it refreshes it),
  one above it UNKNOWN_LEADER_EPOCH (this broker has not caught up yet: the client retries).
- :func:`epoch_of_offset`: the epoch of the batch holding an offset (ListOffsets answers it).
- :func:`end_offset_for`: OffsetForLeaderEpoch's answer (Kafka's ``endOffsetFor``).

Both lookups read batch headers of the local log (a bisection over the segments' first
batches, then one segment's headers): they never run on the Fetch or Produce path. Offsets
below the local log start (the cold tier) are not looked up: see each function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tiered_mq.errors import FencedLeaderEpochError, UnknownLeaderEpochError

if TYPE_CHECKING:
    from tiered_mq.broker.partition import Partition
    from tiered_mq.hot.local_log import LocalLog

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


def check_current_epoch(partition: Partition, requested: int) -> None:
    """Raise unless ``requested`` (the client's ``current_leader_epoch``) is negative or the
    partition's epoch (see the module docstring)."""
    if requested < 0:
        return
    current = partition.leader_epoch
    if requested < current:
        raise FencedLeaderEpochError(
            f"{partition.tp}: leader epoch {requested} is older than the current {current}"
        )
    if requested > current:
        raise UnknownLeaderEpochError(
            f"{partition.tp}: leader epoch {requested} is newer than the current {current}"
        )


def _first_epoch(log: LocalLog, base_offset: int) -> int | None:
    """The epoch of the first batch at or after ``base_offset``, None past the log end."""
    return next((h.partition_leader_epoch for h in log.iter_batch_headers(base_offset)), None)


def epoch_of_offset(partition: Partition, offset: int) -> int:
    """The ``partitionLeaderEpoch`` of the local batch holding ``offset`` (-1 for a batch
    written without one), also when DeleteRecords left it below the log start offset in a
    segment still held (ListOffsets -3 answers such a record with its batch's epoch, as
    Kafka's MAX_TIMESTAMP lookup does); the current epoch when no local batch holds it (the log
    end, an empty log: Kafka's cache holds the current epoch from the log end offset on, or
    a tiered batch below the local segments: its epoch is not looked up in the bucket here)."""
    log = partition.log
    if offset >= log.log_end_offset:
        return partition.leader_epoch
    for header in log.iter_batch_headers(offset, below_log_start=True):
        if header.base_offset <= offset <= header.last_offset:
            return max(header.partition_leader_epoch, UNDEFINED_EPOCH)
        break
    return partition.leader_epoch


def end_offset_for(partition: Partition, requested: int) -> tuple[int, int]:
    """(epoch, end offset) of leader epoch ``requested``, as Kafka's
    ``LeaderEpochFileCache.endOffsetFor``: the current epoch -> (it, log end offset); an epoch
    above it, or -1 -> (-1, -1); an older one -> (the greatest epoch <= ``requested`` found in
    the log, else ``requested``; the first offset written in an epoch above ``requested``).

    The first batch of a later epoch is found by bisecting the local segments on their first
    batch's epoch, then scanning one segment's headers. When every local batch is of a later
    epoch, the end is the local log start offset (the bucket's epochs are not read): never
    below the real end, so a client checking its position never sees a truncation that did not
    happen. When no batch of a later epoch was written yet, the end is the log end offset.
    """
    current = partition.leader_epoch
    if requested == current:
        return current, partition.log_end_offset
    if requested > current or requested < 0:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    log = partition.log
    segments = log.segments()
    lo, hi = 0, len(segments)  # first segment whose first batch is of an epoch > requested
    while lo < hi:
        mid = (lo + hi) // 2
        first = _first_epoch(log, max(segments[mid].base_offset, log.local_log_start_offset))
        if first is not None and first > requested:
            hi = mid
        else:
            lo = mid + 1
    start = log.local_log_start_offset if lo == 0 else segments[lo - 1].base_offset
    floor = requested
    for header in log.iter_batch_headers(max(start, log.local_log_start_offset)):
        if header.partition_leader_epoch > requested:
            return floor, header.base_offset
        epoch = header.partition_leader_epoch
        floor = epoch if epoch >= 0 else requested  # (-1: a batch written without an epoch)
    return floor, partition.log_end_offset
