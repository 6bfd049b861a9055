"""TxnOffsetCommit (28), v0-3: offsets committed as part of a transaction.

Answered after the offsets are appended to the group's ``__consumer_offsets`` partition as a
transactional batch (producer id and epoch); the group coordinator holds them pending
(group/txn_offsets.py) and they become visible to OffsetFetch only once the transaction's
COMMIT marker is in that partition (dropped on ABORT). The group's offsets partition must have
been added with AddOffsetsToTxn (else INVALID_TXN_STATE). Metadata longer than
``offset.metadata.max.bytes`` is OFFSET_METADATA_TOO_LARGE for that partition (the others are
still committed); offsets too large for ``__consumer_offsets`` are INVALID_COMMIT_OFFSET_SIZE
(group/commits.py). From v3 the request names the consumer's generation and member (Java's
``sendOffsetsToTransaction(offsets, consumer.groupMetadata())``): a member that is not current
gets UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID, as in Kafka. A partition of
a topic that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION and not stored, as Kafka's
KafkaApis does (and as OffsetCommit): such an offset would otherwise outlive everything but
expiration, and a topic created later under the name would start at it.
Below v2 COORDINATOR_LOAD_IN_PROGRESS is answered COORDINATOR_NOT_AVAILABLE, as Kafka's
KafkaApis does: producers from 0.11 to 2.0 could crash on the loading error (KAFKA-7296); both
make the client find the coordinator again and retry.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.broker.handlers._txn import coordinator, require_group, require_txn_id
from tiered_mq.broker.txn.coordinator import now_ms
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.TXN_OFFSET_COMMIT
LOAD_IN_PROGRESS_MIN_VERSION = 2


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    topics = request.get("topics") or []
    codes: dict[TopicPartition, int] = {}
    offsets: dict[TopicPartition, fmt.OffsetValue] = {}
    now = now_ms()
    gc = ctx.broker.group_coordinator
    max_meta = gc.config.offset_metadata_max_bytes if gc is not None else 4096
    for t in topics:
        readable = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t["name"])
        meta = ctx.broker.coordinator.get_topic(t["name"])
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            metadata = p.get("committed_metadata") or ""
            if not readable:
                codes[tp] = errors.TopicAuthorizationFailedError.errno
                continue
            if meta is None or not meta.has_partition(tp.partition):
                codes[tp] = errors.UnknownTopicOrPartitionError.errno
                continue
            if len(metadata) > max_meta:
                codes[tp] = errors.OffsetMetadataTooLargeError.errno
                continue
            leader_epoch = p.get("committed_leader_epoch", -1)
            offsets[tp] = fmt.OffsetValue(p["committed_offset"], leader_epoch, metadata, now)
            codes[tp] = 0
    try:
        require_txn_id(ctx, request["transactional_id"])
        require_group(ctx, request["group_id"])
        await coordinator(ctx).txn_offset_commit(
            request["transactional_id"],
            request["group_id"],
            request["producer_id"],
            request["producer_epoch"],
            offsets,
            (
                request.get("generation_id", -1),
                request.get("member_id") or "",
                request.get("group_instance_id"),
            ),
        )
    except Exception as e:
        code = error_code(e)
        codes = {tp: c or code for tp, c in codes.items()}
    if ctx.api_version < LOAD_IN_PROGRESS_MIN_VERSION:
        loading, unavailable = (
            errors.CoordinatorLoadInProgressError.errno,
            errors.CoordinatorNotAvailableError.errno,
        )
        codes = {tp: unavailable if c == loading else c for tp, c in codes.items()}
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": t["name"],
                "partitions": [
                    {
                        "partition_index": p["partition_index"],
                        "error_code": codes[TopicPartition(t["name"], p["partition_index"])],
                    }
                    for p in t["partitions"]
                ],
            }
            for t in topics
        ],
    }
