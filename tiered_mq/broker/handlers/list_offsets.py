"""ListOffsets (2), v1-10: earliest (-2), latest (-1), max timestamp (-3) and by timestamp.

- ``-2``: the log start offset; ``-1``: the high watermark (the last stable offset for
  read_committed); both answer timestamp -1.
- ``t >= 0``: the first offset at or above the log start offset whose record timestamp is
  >= t, through the time index (``LocalLog.offset_for_timestamp``; records DeleteRecords left
  below the log start are skipped); none -> offset -1, timestamp -1 and leader epoch -1, as
  Kafka's ``buildErrorResponse(Errors.NONE, ...)`` (every lookup that finds no offset answers
  leader epoch -1; a found one answers the epoch of the batch holding it,
  broker/leader_epochs.py ``epoch_of_offset``).
- ``-3`` (KIP-734): the first record carrying the partition's greatest timestamp, with that
  timestamp; an empty partition answers -1 / -1. As Kafka's ``MAX_TIMESTAMP``, the records
  DeleteRecords left below the log start offset in a segment still held (locally or in the
  bucket) count, so the answer may lie below the log start offset.
Offsets at or above the high watermark (LSO) are never returned. The leader epoch answered is
Kafka's: the partition's current one for ``-1``, the epoch of the batch holding the offset
otherwise (for an offset only the bucket holds, from its segment's leader epochs in the
manifest, as Kafka's leader epoch cache covers the tiered log). The client's
``current_leader_epoch`` (v4+) is checked first, after the topic's authorization (Kafka's
``Partition.fetchOffsetForTimestamp``): an older one is FENCED_LEADER_EPOCH, a newer one
UNKNOWN_LEADER_EPOCH (leader_epochs.check_current_epoch).
A partition named more than once in the request (in one topic entry or in two) is answered
INVALID_REQUEST (offset and timestamp -1) at each place it is named, and not looked up: Kafka's
``duplicatePartitions`` check, made after the topic's DESCRIBE authorization.
With the cold tier: ``-2`` includes the bucket (the log start offset is the remote one),
``-4`` answers the local log start offset, ``-5`` the highest uploaded offset (-1: none), and a
timestamp older than the local data (or a greatest timestamp held only by uploaded segments)
is looked up through the remote time indexes. Kafka serves -3, -4 and -5 from v7, v8 and v9;
they are accepted at every version here (librdkafka may send them at a lower one).

A bucket lookup waits at most the request's ``timeout_ms`` (v10+, when above 0) or else
``remote.list.offsets.request.timeout.ms`` (30 s; ``rlm.list_offsets``,
cold/remote_list_offsets.py, Kafka's DelayedRemoteListOffsets): past it that partition answers
REQUEST_TIMED_OUT with offset and timestamp -1, the lookup goes on for the client's retry, and
the request's other partitions are answered as usual. The partitions are looked up side by
side, so a request with several hung partitions is answered after one wait, not one each.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any, NamedTuple

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, require_topic
from tiered_mq.broker.leader_epochs import check_current_epoch, epoch_of_offset
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

if TYPE_CHECKING:
    from tiered_mq.cold.remote_log_manager import RemoteLogManager

API_KEY = ApiKey.LIST_OFFSETS
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # KIP-734 (v7 in Kafka)
EARLIEST_LOCAL = -4  # KIP-405 (v8 in Kafka; accepted at every version here)
LATEST_TIERED = -5  # KIP-1005 (v9 in Kafka): highest offset in the bucket, -1 when none


class _Remote(NamedTuple):
    """A lookup that asks the bucket, as the local part left it."""

    partition: Any
    rlm: RemoteLogManager
    start: int  # the log start offset
    upper: int  # offsets at or above it are never answered


def _lookup_local(
    ctx: RequestContext,
    tp: TopicPartition,
    timestamp: int,
    current_epoch: int,
    read_committed: bool,
) -> tuple[int, int, int] | _Remote:
    """(timestamp, offset, leader epoch) answered for ``tp`` (see the module docstring), or the
    bucket lookup to make (a timestamp or -3 on a partition with tiered data). No await."""
    partition = ctx.broker.replica_manager.get_partition(tp)
    check_current_epoch(partition, current_epoch)
    upper = partition.last_stable_offset if read_committed else partition.high_watermark
    if timestamp == LATEST:
        return -1, upper, partition.leader_epoch
    if timestamp == EARLIEST:
        start = partition.log_start_offset
        return -1, start, _epoch_of(partition, ctx.broker.remote_log_manager, tp, start)
    rlm = ctx.broker.remote_log_manager
    if timestamp == EARLIEST_LOCAL:
        local_start = partition.log.local_log_start_offset
        return -1, local_start, epoch_of_offset(partition, local_start)
    if timestamp == LATEST_TIERED:
        tiered_end = rlm.highest_uploaded_offset(tp) if rlm is not None else -1
        return -1, tiered_end, _epoch_of(partition, rlm, tp, tiered_end) if tiered_end >= 0 else -1
    start = partition.log_start_offset
    if rlm is not None and start < partition.log.local_log_start_offset:
        return _Remote(partition, rlm, start, upper)
    if timestamp == MAX_TIMESTAMP:
        found = partition.log.offset_of_max_timestamp()
    else:
        found = partition.log.offset_for_timestamp(timestamp)
    return _found(partition, rlm, tp, found, upper)


def _epoch_of(partition: Any, rlm: RemoteLogManager | None, tp: TopicPartition, offset: int) -> int:
    """The leader epoch answered with ``offset``: that of the batch holding it, read from the
    bucket manifest's segment leader epochs when only the bucket holds it (Kafka's leader
    epoch cache covers the tiered part of the log), else from the local batch headers."""
    if rlm is not None and offset < partition.log.local_log_start_offset:
        epoch = rlm.leader_epoch_of(tp, offset)
        if epoch is not None:
            return epoch
    return epoch_of_offset(partition, offset)


def _found(
    partition: Any, rlm: RemoteLogManager | None, tp: TopicPartition, found: Any, upper: int
) -> tuple[int, int, int]:
    """The answer for a timestamp lookup's (offset, timestamp), None when it found none."""
    if found is None:
        return -1, -1, -1
    offset, ts = int(found[0]), int(found[1])
    if offset >= upper:
        return -1, -1, -1
    return ts, offset, _epoch_of(partition, rlm, tp, offset)


async def _lookup_remote(
    tp: TopicPartition, timestamp: int, remote: _Remote, timeout_ms: int
) -> tuple[int, int, int]:
    """The answer of a lookup on a partition with tiered data (its bucket asked first)."""
    partition, rlm, start, upper = remote
    if timestamp == MAX_TIMESTAMP:
        found = partition.log.offset_of_max_timestamp()
        local_max = -1 if found is None else int(found[1])
        from_bucket = await rlm.list_offsets.lookup(
            tp,
            (tp, MAX_TIMESTAMP, start, local_max),
            lambda: _remote_max_timestamp(rlm, tp, local_max),
            timeout_ms,
        )
        found = from_bucket or found
    else:
        found = await rlm.list_offsets.lookup(
            tp,
            (tp, timestamp, start),
            lambda: rlm.offset_for_timestamp(tp, timestamp, start),
            timeout_ms,
        )
        if found is None:
            found = partition.log.offset_for_timestamp(timestamp)
    return _found(partition, rlm, tp, found, upper)


async def _remote_max_timestamp(
    rlm: RemoteLogManager, tp: TopicPartition, local_max: int
) -> tuple[int, int] | None:
    """(offset, timestamp) of the bucket's first record with its greatest timestamp, when
    that is at least ``local_max`` (a tie goes to the bucket: its copy has the lower offset);
    else None. As Kafka's MAX_TIMESTAMP on a local segment, the records of a readable segment
    below the log start offset count (DeleteRecords into it): the answer may lie below
    the log start offset (``whole_segments`` ignores it), and is never None when the segments'
    max timestamp wins."""
    remote_max = await rlm.max_timestamp(tp)
    if remote_max < 0 or remote_max < local_max:
        return None
    return await rlm.offset_for_timestamp(tp, remote_max, whole_segments=True)


def _answer(
    ctx: RequestContext, name: str, p: dict[str, Any], read_committed: bool, duplicate: bool
) -> tuple[dict[str, Any], TopicPartition | None, _Remote | None]:
    """A partition's answer, and when the bucket must be asked first, its partition and the
    lookup to finish (the answer is then filled by :func:`_finish`)."""
    entry: dict[str, Any] = {"partition_index": p["partition_index"], "error_code": 0}
    try:
        require_topic(ctx, AclOperation.DESCRIBE, name)
        tp = TopicPartition(name, p["partition_index"])
        if duplicate:
            raise InvalidRequestError(f"{tp} is listed more than once")
        current = p.get("current_leader_epoch", -1)
        answer = _lookup_local(ctx, tp, p["timestamp"], current, read_committed)
        if isinstance(answer, _Remote):
            return entry, tp, answer
        ts, offset, epoch = answer
        entry.update(timestamp=ts, offset=offset, leader_epoch=epoch)
    except Exception as e:
        entry.update(error_code=error_code(e), timestamp=-1, offset=-1, leader_epoch=-1)
    return entry, None, None


async def _finish(
    entry: dict[str, Any], tp: TopicPartition, timestamp: int, remote: _Remote, timeout_ms: int
) -> None:
    try:
        ts, offset, epoch = await _lookup_remote(tp, timestamp, remote, timeout_ms)
        entry.update(timestamp=ts, offset=offset, leader_epoch=epoch)
    except Exception as e:
        entry.update(error_code=error_code(e), timestamp=-1, offset=-1, leader_epoch=-1)


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    read_committed = request.get("isolation_level", 0) == 1
    timeout_ms = int(request.get("timeout_ms") or 0)
    asked = [(t["name"], t["partitions"]) for t in request["topics"]]
    named = Counter((name, p["partition_index"]) for name, ps in asked for p in ps)
    topics = []
    remote = []
    for name, ps in asked:
        entries = []
        for p in ps:
            duplicate = named[name, p["partition_index"]] > 1
            entry, tp, lookup = _answer(ctx, name, p, read_committed, duplicate)
            entries.append(entry)
            if lookup is not None and tp is not None:
                remote.append(_finish(entry, tp, p["timestamp"], lookup, timeout_ms))
        topics.append({"name": name, "partitions": entries})
    if remote:  # the bucket lookups side by side: one wait per request, not one each
        await asyncio.gather(*remote)
    return {"throttle_time_ms": 0, "topics": topics}
