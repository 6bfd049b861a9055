"""Fetch (1), v4-11, for consumers (replica fetches come with replication).

Who fetches, by ``replica_id`` (Kafka's FetchParams): -1 is a consumer, and so is any other
negative id but -3 (-2, the debugging consumer, included): reads up to the high watermark, or
the last stable offset for read_committed. -3, the future local replica (Kafka's alter-log-dirs
fetcher), reads up to the log end offset whatever its ``isolation_level``, with no aborted
transactions listed (Kafka's LOG_END isolation); on this single replica the high watermark is
the log end offset once each append is done, so it differs from a consumer only in ignoring
read_committed. An id >= 0 is a follower: this broker knows none (no replication yet), so, as
Kafka's ``Partition.followerReplicaOrThrow`` answers a replica not in the partition's replica
set, each partition answers UNKNOWN_LEADER_EPOCH when the request names a
``current_leader_epoch`` (v9+) and NOT_LEADER_OR_FOLLOWER when not, at once, with no records
(after Kafka's earlier checks: with an authorizer the principal needs CLUSTER_ACTION on the
cluster, else TOPIC_AUTHORIZATION_FAILED for every partition; then UNKNOWN_TOPIC_OR_PARTITION,
KAFKA_STORAGE_ERROR for an offline partition, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for
an epoch other than the partition's). It was served as a consumer: a client with a wrong
replica id read records Kafka refuses it.

Per requested partition, in request order, whole batches from the batch holding
``fetch_offset`` up to the high watermark (the last stable offset for read_committed, with the
aborted transactions overlapping the range read), as FileRegions the server sends with
sendfile. Byte limits: each partition gets at most ``partition_max_bytes`` and the response
at most ``max_bytes``, except that the first partition with data always returns at least one
whole batch (KIP-74), so a batch larger than the limits never stalls a consumer. The response
budget is the smaller of the request's ``max_bytes`` and the broker's ``fetch.max.bytes``.

Single-partition fill (broker config ``fetch.single.partition.max.bytes``, 0 = off): a request
for ONE partition may read past ``partition_max_bytes``, up to that many bytes within the
response budget. The per-partition limit shares a response fairly between partitions; with one
there is nothing to share. Whether a fetch is filled depends on how its client paces itself
(``_Continuations``, per client address and partition):

- librdkafka stops fetching for ``fetch.queue.backoff.ms`` (1 s by default) once
  ``queued.min.messages`` are queued, so a default consumer gets about one response per second:
  1 MiB per fetch caps it at ~150-250k msg/s of 100-byte records, a filled one at ~400k.
- A consumer that comes back sooner (a shorter backoff, or a Java-style consumer that fetches
  when its buffer is empty) is faster with Kafka's exact limit: small responses keep its queue
  fed while the next one is read, where a filled one leaves it idle while it is parsed.
- So a fetch is filled when it continues above the same client's previous fetch offset and
  comes ``BACKOFF_PACED_GAP_S`` or more after that fetch (the client waited out a backoff). A
  continuation that comes sooner gets ``partition_max_bytes``; a default consumer has waited
  out its first backoff after ``queued.min.messages`` (100k) records.
- librdkafka hands out no record of a response before it has parsed all of it, so a first
  fetch at a position (a start, a seek back, a re-fetch) is never filled: its first records
  come at once.

Cold reads (below the local log start offset) are filled the same way, also within
``remote.log.reader.fetch.max.bytes`` (``RemoteLogManager.fetch_max_bytes``, never above half
the chunk cache, whose files they pin): they come back as FileRegions over the chunk cache's
files (every batch CRC- and offset-checked by streaming them in bounded pieces first), sent
with sendfile like hot data, so memory stays flat whatever the fill; such a read goes on
across remote segment ends, and from the last one into the local log.

Long poll: while fewer than ``min_bytes`` are available (``min_bytes`` capped at the response
budget, and a partition whose read the byte limit stopped in front of more data counted as its
whole limit: Kafka slices a partition's bytes at exactly its limit, whole batches here stop
short of it, so a backlog always satisfies a ``min_bytes`` as large as the limits), no
partition's read failed (OFFSET_OUT_OF_RANGE, a leader epoch, a storage error: Kafka's
errorReadingData) and none was read from the cold tier (Kafka answers a fetch with a remote
read once that read is done, DelayedRemoteFetch, whatever ``min_bytes``), the fetch parks in
the purgatory (no blocking) until an append to one of its partitions or ``max_wait_ms``; the
answer always comes from a read made after the wait (records deleted while it waited are
never sent: the client gets OFFSET_OUT_OF_RANGE and finds the new log start with ListOffsets).
A partition refused before any read (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION) is
answered with the others and does not end the wait, as Kafka keeps such ``erroneous``
partitions out of the DelayedFetch; a fetch of nothing but those is answered at once. A
partition that goes while the fetch waits (its topic deleted: the deletion wakes the purgatory)
answers it at once, as Kafka's DelayedFetch completes when a partition it watches is unknown.
Fetch sessions are declined (session_id 0): every requested partition is in every response.
As this broker never creates a session, an incremental fetch (v7+ ``session_epoch`` other than
0 and -1, which only a session's client sends) is answered as Kafka answers one for a session it
does not have: FETCH_SESSION_ID_NOT_FOUND at the top level and no partitions (the client then
sends a full fetch). A partition named more than once is read once and answered once, at the
place it was first named, with the fetch position of its last mention: Kafka's request holds
the partitions in a LinkedHashMap.
A partition answered with an error (OFFSET_OUT_OF_RANGE included) has high_watermark,
last_stable_offset and log_start_offset -1 and null aborted_transactions, in every version, as
Kafka's ``ReplicaManager.readFromLog`` builds an error's LogReadResult (the consumer resets its
position with ListOffsets, not from these fields).
A partition's ``current_leader_epoch`` (v9+, -1: none) is checked before anything is read
(broker/leader_epochs.py, Kafka's ``Partition.fetchRecords``): an older one answers
FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, with no records and offsets -1.
An offset below the local log start offset but above the log start offset is read from the
cold tier when one is wired (``remote_log_manager.read_regions``), within the same byte limits:
only the first partition with data may pass them, by its first batch (Kafka's minOneMessage);
a read_committed one lists the aborted transactions of the bucket's ``.txnindex`` objects
(``aborted_transactions``) merged with the partition's, over the offsets the regions hold.
Each of those bucket reads is waited for at most ``remote.fetch.max.wait.ms`` (``rlm.fetches``,
cold/remote_fetch.py): past it, the partition is answered with no records and no error, as
Kafka does, and the client fetches again.

Errors an old version cannot express are mapped as Kafka's ``KafkaApis.handleFetchRequest``
does when it builds the response (after any long-poll wait): below v10 (KIP-110) a partition of
a topic whose ``compression.type`` is ``zstd`` answers UNSUPPORTED_COMPRESSION_TYPE with no
records, whatever its read gave; up to v5 KAFKA_STORAGE_ERROR (which such clients may not know
and would not retry) is answered NOT_LEADER_OR_FOLLOWER, so they refresh metadata and retry.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.broker.leader_epochs import check_current_epoch
from tiered_mq.errors import (
    FetchSessionIdNotFoundError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
    UnknownLeaderEpochError,
    UnknownTopicOrPartitionError,
    UnsupportedCompressionTypeError,
)
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.FETCH
READ_COMMITTED = 1
FUTURE_LOCAL_REPLICA_ID = -3  # Kafka's FetchRequest: reads to the log end offset
FULL_FETCH_EPOCHS = (0, -1)  # a new session's first fetch, or a sessionless one (Kafka's isFull)
ZSTD_MIN_VERSION = 10  # KIP-110: older fetchers may not read zstd batches
STORAGE_ERROR_MIN_VERSION = 6  # FetchResponse.json: KAFKA_STORAGE_ERROR from v6
CONTINUATIONS_KEPT = 4096
BACKOFF_PACED_GAP_S = 0.75  # librdkafka's queue-full backoff is 1 s by default


class _Continuations:
    """Per (client address, partition), a bounded LRU of when the client last fetched and
    from which offset."""

    def __init__(self, size: int, paced_gap: float) -> None:
        self._size = size
        self._paced_gap = paced_gap
        self._last: OrderedDict[tuple[str, TopicPartition], tuple[int, float]] = OrderedDict()

    def fill(self, peer: str, tp: TopicPartition, offset: int, now: float) -> bool:
        """Whether this fetch is filled: it continues above the client's previous fetch offset
        and comes ``paced_gap`` seconds or more after it. Records it."""
        key = (peer, tp)
        previous = self._last.get(key)
        self._last[key] = (offset, now)
        self._last.move_to_end(key)
        if len(self._last) > self._size:
            self._last.popitem(last=False)
        return (
            previous is not None and offset > previous[0] and now - previous[1] >= self._paced_gap
        )


_continuations = _Continuations(CONTINUATIONS_KEPT, BACKOFF_PACED_GAP_S)


def _aborted(partition: Any, start: int, end: int) -> list[dict[str, int]]:
    return [
        {"producer_id": t.producer_id, "first_offset": t.first_offset}
        for t in partition.aborted_transactions(start, end)
    ]


def _upper_bound(info: Any, max_offset: int) -> int:
    """The end of the offsets a read returned (Kafka's ``fetchUpperBoundOffset``, which bounds
    the aborted transactions listed): the base offset of the batch right after its regions,
    read from that batch's header, when the limit stopped it in front of more data; else
    ``max_offset`` (also when it stopped at a segment's end: a wider list is harmless)."""
    if not info.more:
        return max_offset
    last = info.regions[-1]
    head = os.pread(last.file.fileno(), 8, last.position + last.length)
    return int.from_bytes(head, "big") if len(head) == 8 else max_offset


async def _cold_aborted(
    rlm: Any, partition: Any, tp: TopicPartition, start: int, end: int
) -> list[dict[str, int]]:
    """The bucket's aborted transactions (its ``.txnindex`` objects: right after a restart or
    once the local segments are deleted) merged with those this broker indexed."""
    seen = {(t.producer_id, t.first_offset) for t in await rlm.aborted_transactions(tp, start, end)}
    seen.update((t.producer_id, t.first_offset) for t in partition.aborted_transactions(start, end))
    return [{"producer_id": p, "first_offset": f} for p, f in sorted(seen, key=lambda e: e[1])]


def _go_on_locally(
    partition: Any, regions: list[Any], size: int, limit: int, end: int | None, max_offset: int
) -> tuple[int, int | None]:
    """Extend a filled cold read that got less than ``limit`` (the bucket's data ran out) with
    the local log from ``end``, the offset after its last batch. Returns the new size and the
    offset after the last one read (None when the regions hold no whole batch)."""
    if end is None or end < partition.log.local_log_start_offset:
        return size, end  # stopped in front of a later remote segment's oversized first batch
    hot = partition.read(end, limit - size, max_offset, False)
    if hot is None or not hot.regions:
        return size, end
    regions.extend(hot.regions)
    return size + int(hot.size), max_offset


class _Reads:
    """What one read of the request's partitions did, besides its answer: bytes read per
    topic (for the per-topic BytesOut metric), whether a partition was read from the cold
    tier (the fetch is then answered at once, as Kafka's DelayedRemoteFetch, never parked for
    ``min_bytes``: the bucket read would be made and counted again), ``unsent``: what the
    partitions stopped short of their limits in front of more data did not send (counted
    toward ``min_bytes``, see the module docstring) and ``refused``: the partitions answered
    before any read (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION), which do not end
    a long poll (Kafka's ``erroneous`` partitions)."""

    __slots__ = ("by_topic", "refused", "remote", "unsent")

    def __init__(self) -> None:
        self.by_topic: list[tuple[str, int]] = []
        self.remote = False
        self.unsent = 0
        self.refused = 0


def _failed(entry: dict[str, Any], code: int) -> None:
    """Answer ``entry`` with the error ``code``: no records, offsets -1, no aborted
    transactions (Kafka's error LogReadResult), whatever its read had set."""
    entry.update(
        error_code=code,
        high_watermark=-1,
        last_stable_offset=-1,
        log_start_offset=-1,
        aborted_transactions=None,
        records=b"",
    )


def _from_unknown_replica(ctx: RequestContext, topics: list[dict[str, Any]]) -> list[Any]:
    """The responses to a follower's fetch (``replica_id`` >= 0): every partition refused, see
    the module docstring. Nothing is read."""
    allowed = ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    get_partition = ctx.broker.replica_manager.get_partition
    responses = []
    for topic in topics:
        parts = []
        for req in topic["partitions"]:
            entry = _entry(req["partition"], False)
            parts.append(entry)
            epoch = req.get("current_leader_epoch", -1)
            code = TopicAuthorizationFailedError.errno
            if allowed:
                try:
                    check_current_epoch(
                        get_partition(TopicPartition(topic["topic"], req["partition"])), epoch
                    )
                    code = (
                        UnknownLeaderEpochError if epoch >= 0 else NotLeaderOrFollowerError
                    ).errno
                except Exception as e:
                    code = error_code(e)
            _failed(entry, code)
        responses.append({"topic": topic["topic"], "partitions": parts})
    return responses


def _entry(index: int, read_committed: bool) -> dict[str, Any]:
    """A partition's answer before its read: no records, offsets -1."""
    return {
        "partition_index": index,
        "error_code": 0,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": [] if read_committed else None,
        "preferred_read_replica": -1,
        "records": b"",
    }


class _Cold(NamedTuple):
    """A partition's read that goes to the cold tier, as the local check left it."""

    partition: Any
    offset: int
    limit: int
    max_offset: int
    sequential: bool


def _read_local(
    get_partition: Callable[[TopicPartition], Any],
    tiered: bool,
    tp: TopicPartition,
    req: dict[str, Any],
    entry: dict[str, Any],
    budget: int,
    min_one: bool,
    read_committed: bool,
    fill: int,
    reads: _Reads,
) -> int | _Cold:
    """Fill ``entry`` from the local log: the bytes read, or the cold read to make (the offset
    is below the local log start; ``tiered``: a cold tier is wired). Raises the partition's
    error (``entry`` keeps the offsets set before it). No await: a partition of the local log
    costs no coroutine. A read the limit stopped in front of more data adds what it left of
    its limit to ``reads.unsent``."""
    partition = get_partition(tp)
    epoch = req.get("current_leader_epoch", -1)
    if epoch >= 0:  # v9+ (one test on the hot path)
        check_current_epoch(partition, epoch)
    hwm = partition.high_watermark
    lso = partition.last_stable_offset
    log_start = partition.log_start_offset
    entry["high_watermark"] = hwm
    entry["last_stable_offset"] = lso
    entry["log_start_offset"] = log_start
    limit = min(req["partition_max_bytes"], budget)
    offset = req["fetch_offset"]
    cold = tiered and log_start <= offset < partition.log.local_log_start_offset
    # the offset is checked whatever the limits (Kafka's LocalLog.read checks it first): a
    # partition after a full response, or with partition_max_bytes 0, still gets its error
    if not cold and (offset < log_start or offset > partition.log_end_offset):
        raise OffsetOutOfRangeError(
            f"fetch offset {offset} outside [{log_start}, {partition.log_end_offset}] of {tp}"
        )
    if limit <= 0 and not min_one:
        return 0
    max_offset = lso if read_committed else hwm
    sequential = fill > limit
    if cold:
        return _Cold(partition, offset, limit, max_offset, sequential)
    if offset >= max_offset:  # nothing to read yet: a consumer at the end of the log
        return 0
    if sequential:
        limit = min(fill, budget)  # one partition, read sequentially: fill up to ``fill``
    info = partition.read(offset, max(limit, 0), max_offset, min_one)
    if info is None:
        return 0
    size = int(info.size)
    if info.more and size < limit:  # also a first batch larger than the limit, not sent
        reads.unsent += limit - size
    if not info.regions:
        return 0
    entry["records"] = list(info.regions)
    if read_committed:  # transactions aborted in the range read (broker/txn/partition_txn.py)
        upper = _upper_bound(info, max_offset)
        entry["aborted_transactions"] = _aborted(partition, info.first_offset, upper)
    return size


async def _read_cold(
    ctx: RequestContext,
    tp: TopicPartition,
    cold_read: _Cold,
    entry: dict[str, Any],
    budget: int,
    min_one: bool,
    read_committed: bool,
    fill: int,
) -> int:
    """Fill ``entry`` from the cold tier (see the module docstring): the bytes read."""
    rlm = ctx.broker.remote_log_manager
    assert rlm is not None
    partition, offset, limit, max_offset, sequential = cold_read
    if sequential:  # filled too, within the cold tier's cap (it pins chunk files)
        limit = max(limit, min(fill, budget, rlm.fetch_max_bytes))
    want = max(limit, 1)
    cold = await rlm.fetches.within(
        tp,
        ("regions", tp, offset, want, sequential, min_one),
        lambda: rlm.read_regions(tp, offset, want, span=sequential, min_one=min_one),
    )
    if cold is None:  # the bucket is slow: no records, the client fetches again
        return 0
    regions: list[Any] = list(cold.regions)
    size, end = cold.size, cold.next_offset  # end: one past the last offset read
    if sequential and size < limit:
        size, end = _go_on_locally(partition, regions, size, limit, end, max_offset)
    if not regions:  # no room for its first batch (min_one): no aborted txns to list
        return 0
    if read_committed:
        end = max_offset if end is None else min(end, max_offset)
        aborted = await rlm.fetches.within(
            tp,
            ("aborted", tp, offset, end),
            lambda: _cold_aborted(rlm, partition, tp, offset, end),
        )
        if aborted is None:
            return 0
        entry["aborted_transactions"] = aborted
    entry["records"] = regions
    return int(size)


def _fill(ctx: RequestContext, request: dict[str, Any], now: float) -> int:
    """The bytes this request's one partition may read past ``partition_max_bytes`` (0: none)."""
    parts = [(t["topic"], p) for t in request["topics"] for p in t["partitions"]]
    size = ctx.broker.config.get_int("fetch.single.partition.max.bytes")
    if len(parts) != 1 or size <= parts[0][1]["partition_max_bytes"]:
        return 0
    topic, part = parts[0]
    tp = TopicPartition(topic, part["partition"])
    return size if _continuations.fill(ctx.client_host, tp, part["fetch_offset"], now) else 0


async def _read_all(
    ctx: RequestContext,
    request: dict[str, Any],
    fill: int = 0,
    reads: _Reads | None = None,
) -> tuple[list[dict[str, Any]], int, bool]:
    """(responses by topic, bytes read, whether a partition errored); ``reads`` (reset
    first) gets the rest of what the read did."""
    if reads is None:
        reads = _Reads()
    budget = min(request["max_bytes"], ctx.broker.config.get_int("fetch.max.bytes"))
    read_committed = (
        request["isolation_level"] == READ_COMMITTED
        and request.get("replica_id", -1) != FUTURE_LOCAL_REPLICA_ID
    )
    total = 0
    errored = False
    responses = []
    reads.by_topic.clear()
    reads.remote = False
    reads.unsent = 0
    reads.refused = 0
    get_partition = ctx.broker.replica_manager.get_partition
    tiered = ctx.broker.remote_log_manager is not None
    for topic in request["topics"]:
        name = topic["topic"]
        parts = []
        before = total
        # once per topic, as Kafka's filterByAuthorized authorizes each topic name once
        denied = not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name)
        for req in topic["partitions"]:
            index = req["partition"]
            entry = _entry(index, read_committed)
            parts.append(entry)
            if denied:
                entry["error_code"] = TopicAuthorizationFailedError.errno
                reads.refused += 1
                continue
            tp = TopicPartition(name, index)
            min_one = total == 0
            try:
                size = _read_local(
                    get_partition,
                    tiered,
                    tp,
                    req,
                    entry,
                    budget,
                    min_one,
                    read_committed,
                    fill,
                    reads,
                )
                if isinstance(size, _Cold):
                    reads.remote = True
                    size = await _read_cold(
                        ctx, tp, size, entry, budget, min_one, read_committed, fill
                    )
            except Exception as e:
                _failed(entry, error_code(e))
                if isinstance(e, UnknownTopicOrPartitionError):  # no such partition, not read
                    reads.refused += 1
                else:
                    errored = True
                continue
            total += size
            budget -= size
        responses.append({"topic": name, "partitions": parts})
        reads.by_topic.append((name, total - before))
    return responses, total, errored


def _once_each(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's topics with each partition once (see the module docstring); ``topics``
    itself when no partition repeats."""
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    count = 0
    for t in topics:
        for p in t["partitions"]:
            merged[t["topic"], p["partition"]] = p  # a repeat keeps the first one's place
            count += 1
    if len(merged) == count:
        return topics
    out: list[dict[str, Any]] = []
    for (name, _), p in merged.items():
        if not out or out[-1]["topic"] != name:
            out.append({"topic": name, "partitions": []})
        out[-1]["partitions"].append(p)
    return out


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("session_epoch", -1) not in FULL_FETCH_EPOCHS:
        return {
            "throttle_time_ms": 0,
            "error_code": FetchSessionIdNotFoundError.errno,
            "session_id": 0,
            "responses": [],
        }
    topics = _once_each(request["topics"])
    if request.get("replica_id", -1) >= 0:  # a follower's: none is known here
        responses = _from_unknown_replica(ctx, topics)
        _for_version(ctx, responses)
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}
    if topics is not request["topics"]:
        request = {**request, "topics": topics}
    now = time.monotonic()
    deadline = now + max(request["max_wait_ms"], 0) / 1000.0
    fill = _fill(ctx, request, now)
    # Kafka's fetchMinBytes: never more than the response may hold
    budget = min(request["max_bytes"], ctx.broker.config.get_int("fetch.max.bytes"))
    min_bytes = min(request["min_bytes"], budget)
    tps = [
        TopicPartition(t["topic"], p["partition"])
        for t in request["topics"]
        for p in t["partitions"]
    ]
    purgatory = ctx.broker.replica_manager.purgatory
    closed = ctx.client_closed
    reads = _Reads()
    refused_first = -1  # the partitions refused by the first read: they do not end the wait
    while True:
        responses, total, errored = await _read_all(ctx, request, fill, reads)
        if refused_first < 0:
            refused_first = reads.refused
        if (
            total + reads.unsent >= min_bytes
            or errored
            or reads.remote
            or reads.refused == len(tps)
            or reads.refused > refused_first  # one went while waiting (deleted): Kafka answers
        ):
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0 or (closed is not None and closed.done()):
            break  # a client that has gone is answered now, not after max_wait_ms
        # woken or timed out, read again: the answer comes from the log as it is now (Kafka's
        # DelayedFetch.onComplete reads again), never from the read before the wait, whose
        # records may have been deleted meanwhile (DeleteRecords, retention)
        await purgatory.wait(tps, remaining, closed)
    _for_version(ctx, responses)
    if total:  # BytesOutPerSec by topic, counted as the response is built (as Kafka)
        metrics = ctx.broker.metrics
        for name, size in reads.by_topic:
            if size:
                metrics.topic(name).bytes_out += size
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


def _for_version(ctx: RequestContext, responses: list[dict[str, Any]]) -> None:
    """Map, in place, what the request's version cannot carry (see the module docstring)."""
    version = ctx.api_version
    if version >= max(ZSTD_MIN_VERSION, STORAGE_ERROR_MIN_VERSION):
        return
    hosted = ctx.broker.replica_manager.partitions
    for topic in responses:
        for entry in topic["partitions"]:
            if version < ZSTD_MIN_VERSION:
                partition = hosted.get(TopicPartition(topic["topic"], entry["partition_index"]))
                if partition is not None and partition.log.config.compression_type == "zstd":
                    _failed(entry, UnsupportedCompressionTypeError.errno)
            if (
                version < STORAGE_ERROR_MIN_VERSION
                and entry["error_code"] == KafkaStorageError.errno
            ):
                entry["error_code"] = NotLeaderOrFollowerError.errno
