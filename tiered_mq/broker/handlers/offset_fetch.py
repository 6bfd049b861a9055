"""OffsetFetch (9), v1-7: committed offsets of a group.

A null topic list (v2+) asks for every partition the group has committed. A partition with no
committed offset answers offset -1, metadata "" and no error, as Kafka does. From v5 each
committed offset carries the leader epoch its commit named (OffsetCommit v6+,
TxnOffsetCommit v2+; -1 when none was), as Kafka's ``OffsetMetadataManager.fetchOffsets``
returns it: a consumer resuming from it validates its position with OffsetForLeaderEpoch.

Offsets committed by a transaction that has not ended (TxnOffsetCommit, group/txn_offsets.py)
are never returned. A request with ``require_stable`` (v7+, KIP-447; what a read_committed
consumer sends) gets UNSTABLE_OFFSET_COMMIT (retriable, offset -1) for each partition with such
pending offsets, as Kafka's ``GroupMetadataManager.getOffsets``: the client retries until the
transaction ends. A null topic list then still lists only the partitions with a committed
offset (Kafka's ``group.allOffsets``), some of them answering UNSTABLE_OFFSET_COMMIT.

A group-level error (GROUP_AUTHORIZATION_FAILED, COORDINATOR_LOAD_IN_PROGRESS, ...) is the
top-level ``error_code`` from v2, with no partitions (Kafka's ``getErrorResponse``); v1 has no
top-level error, so every requested partition carries it.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.topic_partition import TopicPartition

API_KEY = 9


def _partition(
    index: int, offset: int, metadata: str, code: int = 0, epoch: int = -1
) -> dict[str, Any]:
    return {
        "partition_index": index,
        "committed_offset": offset,
        "committed_leader_epoch": epoch,
        "metadata": metadata,
        "error_code": code,
    }


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    coordinator = ctx.broker.group_coordinator
    topics = request.get("topics")
    wanted = (
        None
        if topics is None
        else [TopicPartition(t["name"], p) for t in topics for p in t["partition_indexes"]]
    )
    denied: set[str] = set()  # topics the principal may not DESCRIBE
    committed: dict[TopicPartition, Any]
    if coordinator is None:
        code, committed = errors.CoordinatorNotAvailableError.errno, {}
    elif not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, request["group_id"]):
        code, committed = errors.GroupAuthorizationFailedError.errno, {}
    else:
        code, committed = coordinator.fetch_offsets(request["group_id"], wanted)
        named = {tp.topic for tp in committed} | {tp.topic for tp in wanted or ()}
        described = AclOperation.DESCRIBE
        denied = {t for t in named if not ctx.authorize(described, ResourceType.TOPIC, t)}
        committed = {tp: v for tp, v in committed.items() if tp.topic not in denied}
    unstable: set[TopicPartition] = set()
    if coordinator is not None and not code and request.get("require_stable"):
        unstable = coordinator.unstable_partitions(request["group_id"])
    by_topic: dict[str, list[dict[str, Any]]] = {}
    if wanted is not None:  # a group-level error lists no partition from v2 (Kafka)
        listed = wanted if not code or ctx.header.api_version < 2 else []
    else:  # every committed partition (denied topics were filtered out above)
        listed = sorted(committed)
    for tp in listed:
        value = committed.get(tp)
        if tp.topic in denied:
            entry = _partition(tp.partition, -1, "", errors.TopicAuthorizationFailedError.errno)
        elif tp in unstable:
            entry = _partition(tp.partition, -1, "", errors.UnstableOffsetCommitError.errno)
        elif value is not None:
            entry = _partition(tp.partition, value.offset, value.metadata, 0, value.leader_epoch)
        else:
            entry = _partition(tp.partition, -1, "", code)
        by_topic.setdefault(tp.topic, []).append(entry)
    return {
        "throttle_time_ms": 0,
        "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
        "error_code": code,
    }
