"""Metadata (3): brokers, controller and topic/partition leadership.

A null topic list (or an empty one at v0) means every topic. A requested topic that does not
exist is created when the broker's ``auto.create.topics.enable`` is true and the request allows
it (v4+ ``allow_auto_topic_creation``), with ``num.partitions`` partitions; its entry then
answers LEADER_NOT_AVAILABLE-free metadata at once (the partitions open before we answer).
Invalid names answer INVALID_TOPIC_EXCEPTION. Leader epoch comes from the partition state (0
until replication assigns epochs). With an authorizer, topics the principal may not DESCRIBE
are left out of "every topic" and answer TOPIC_AUTHORIZATION_FAILED when named; auto-creation
needs CREATE on the cluster or the topic, and a missing topic it would create for a principal
without it answers TOPIC_AUTHORIZATION_FAILED too (Kafka's: a producer fails at once instead of
waiting for a topic that never comes). v8+ answers the topics' (and, v8-10, the cluster's)
authorized operations when asked (acl/operations.py).

A partition this broker should lead but cannot serve (offline: its log failed to open,
ReplicaManager.offline) is answered as Kafka's metadata cache answers a partition without a
live leader: LEADER_NOT_AVAILABLE, leader -1, its leader epoch, replicas and ISR as recorded,
and this broker in ``offline_replicas`` (v5+). The topic's own error stays NONE. Clients then
hold that partition's records (a keyed producer never moves them to another partition) and
look again, instead of sending requests the broker can only refuse.

A partition with no state (ZooKeeper mode: a topic written by Kafka's tools whose replicas are
none of them registered, so the controller elects no leader for it) is unknown to the answer,
as to Kafka's metadata cache, which the controller's UpdateMetadata never gave it: it is left
out of its topic's partitions, and a topic none of whose partitions has a state is answered
as one that does not exist (left out of "every topic"; named, UNKNOWN_TOPIC_OR_PARTITION, or
LEADER_NOT_AVAILABLE with no partitions where auto-creation applies, as Kafka's
AutoTopicCreationManager answers a topic already in ZooKeeper). Such a partition is not
hosted (ReplicaManager), so Produce, Fetch and ListOffsets answer it UNKNOWN_TOPIC_OR_PARTITION.
The embedded coordinator writes every partition's state with its topic.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.acl.operations import (
    NOT_REQUESTED,
    authorized_operations,
    cluster_operations,
)
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, live_brokers
from tiered_mq.broker.topic_names import is_internal, validate_topic_name
from tiered_mq.errors import (
    InvalidTopicError,
    LeaderNotAvailableError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.METADATA
YIELD_EVERY_PARTITIONS = 1000


class _Entries:
    """Builds the topic entries of one request, with what they are read from looked up once
    (a request for every topic builds one per topic)."""

    __slots__ = ("_get_topic", "_node_id", "_offline", "_partition_state")

    def __init__(self, ctx: RequestContext) -> None:
        broker = ctx.broker
        self._get_topic = broker.topic_registry.get_topic
        self._offline = broker.replica_manager.offline  # changed in place, never replaced
        self._node_id = broker.config.node_id
        self._partition_state = broker.coordinator.partition_state

    def entry(self, name: str) -> dict[str, Any]:
        meta = self._get_topic(name)
        if meta is None:
            return {
                "error_code": UnknownTopicOrPartitionError.errno,
                "name": name,
                "partitions": [],
            }
        partitions = []
        offline = self._offline
        node_id = self._node_id
        partition_state = self._partition_state
        alone: tuple[int, ...] = (node_id,)
        for p in range(meta.partitions):
            tp = TopicPartition(name, p)
            state = partition_state(tp)
            if state is None:  # no leader was ever elected: unknown (module docstring)
                continue
            leader, epoch = state.leader, state.leader_epoch
            replicas, isr = state.replicas, state.isr  # tuples: written as arrays
            if offline and tp in offline:
                down = leader == node_id  # its only possible leader: this broker
                partitions.append(
                    {
                        "error_code": LeaderNotAvailableError.errno if down else 0,
                        "partition_index": p,
                        "leader_id": -1 if down else leader,
                        "leader_epoch": epoch,
                        "replica_nodes": replicas,
                        "isr_nodes": isr,
                        "offline_replicas": alone,
                    }
                )
                continue
            partitions.append(
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": leader,
                    "leader_epoch": epoch,
                    "replica_nodes": replicas,
                    "isr_nodes": isr,
                    "offline_replicas": (),
                }
            )
        if not partitions and meta.partitions:  # none with a state: an unknown topic
            return {
                "error_code": UnknownTopicOrPartitionError.errno,
                "name": name,
                "partitions": [],
            }
        return {
            "error_code": 0,
            "name": name,
            "is_internal": is_internal(name),
            "partitions": partitions,
        }


async def _maybe_create(ctx: RequestContext, name: str, allow: bool) -> int:
    """0 if the topic exists (or was just created), else the error code for its entry: as in
    Kafka, TOPIC_AUTHORIZATION_FAILED when it would be auto-created but the principal may not
    create it (checked before its name), then INVALID_TOPIC_EXCEPTION for a bad name, then
    UNKNOWN_TOPIC_OR_PARTITION when auto-creation is off."""
    registry = ctx.broker.topic_registry
    if registry.get_topic(name) is not None:
        return 0
    auto_create = allow and ctx.broker.config.get_bool("auto.create.topics.enable", True)
    if auto_create and not _may_create(ctx, name):
        return TopicAuthorizationFailedError.errno
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return InvalidTopicError.errno
    if not auto_create:
        return UnknownTopicOrPartitionError.errno
    try:
        await registry.create_topic(name)
    except TopicAlreadyExistsError:
        pass
    except Exception as e:
        return error_code(e)
    return 0


def _without_state(ctx: RequestContext, name: str, allow: bool) -> int:
    """The error code of topic ``name``, which exists but has no partition with a state (or
    was deleted meanwhile), as Kafka answers a topic its metadata cache does not hold: where
    auto-creation applies, TOPIC_AUTHORIZATION_FAILED for a principal who may not create it,
    else LEADER_NOT_AVAILABLE (the creation finds it already exists); UNKNOWN_TOPIC_OR_PARTITION
    otherwise."""
    if not (allow and ctx.broker.config.get_bool("auto.create.topics.enable", True)):
        return UnknownTopicOrPartitionError.errno
    if not _may_create(ctx, name):
        return TopicAuthorizationFailedError.errno
    return LeaderNotAvailableError.errno


def _may(ctx: RequestContext, operation: AclOperation, topic: str) -> bool:
    return ctx.authorize(operation, ResourceType.TOPIC, topic)


def _may_create(ctx: RequestContext, topic: str) -> bool:
    """Auto-creation needs CREATE on the cluster or on the topic."""
    cluster = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
    return cluster or _may(ctx, AclOperation.CREATE, topic)


async def _every_topic(ctx: RequestContext) -> list[dict[str, Any]]:
    """The entries of every topic the principal may describe. The event loop serves other
    requests every :data:`YIELD_EVERY_PARTITIONS` partitions (an answer of thousands of
    partitions took it for tenths of a second); a topic deleted meanwhile is left out, as
    one deleted just before the listing."""
    topics = []
    since_yield = 0
    entries = _Entries(ctx)
    for name in ctx.broker.topic_registry.list_topics():
        if since_yield >= YIELD_EVERY_PARTITIONS:
            await asyncio.sleep(0)
            since_yield = 0
        if not _may(ctx, AclOperation.DESCRIBE, name):
            continue
        entry = entries.entry(name)
        if entry["error_code"] != UnknownTopicOrPartitionError.errno:
            topics.append(entry)
            since_yield += len(entry["partitions"]) + 1
    return topics


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    broker = ctx.broker
    requested = request.get("topics")
    if requested is None or (ctx.api_version == 0 and not requested):
        topics = await _every_topic(ctx)
    else:
        allow = bool(request.get("allow_auto_topic_creation", True))
        topics = []
        entries = _Entries(ctx)
        for name in dict.fromkeys(t["name"] for t in requested):  # once each, as Kafka's set
            if not _may(ctx, AclOperation.DESCRIBE, name):
                code = TopicAuthorizationFailedError.errno
            else:
                code = await _maybe_create(ctx, name, allow)
            if code:
                topics.append({"error_code": code, "name": name, "partitions": []})
                continue
            entry = entries.entry(name)
            if entry["error_code"] == UnknownTopicOrPartitionError.errno:
                entry["error_code"] = _without_state(ctx, name, allow)
            topics.append(entry)
    if request.get("include_topic_authorized_operations"):
        for entry in topics:
            if entry["error_code"] == 0:
                ops = authorized_operations(ctx.authorize, ResourceType.TOPIC, entry["name"])
                entry["topic_authorized_operations"] = ops
    brokers = [
        {"node_id": node_id, "host": host, "port": port, "rack": rack}
        for node_id, host, port, rack in live_brokers(ctx)
    ]
    include_cluster = request.get("include_cluster_authorized_operations")
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.coordinator.controller_id(),
        "topics": topics,
        "cluster_authorized_operations": (
            cluster_operations(ctx.authorize) if include_cluster else NOT_REQUESTED
        ),
    }
