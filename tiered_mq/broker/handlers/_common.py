"""Helpers shared by handlers (not a handler: the leading underscore keeps discovery away)."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.errors import (
    ClusterAuthorizationFailedError,
    InvalidRequestError,
    KafkaError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    StorageError,
    TopicAuthorizationFailedError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.errors import (
    GroupAuthorizationFailedError as GroupAuthError,
)
from tiered_mq.topic_partition import TopicPartition

if TYPE_CHECKING:
    from tiered_mq.broker.context import RequestContext
    from tiered_mq.broker.partition import Partition

log = logging.getLogger(__name__)
_T = TypeVar("_T")

NONE = 0
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
BROKER_LOGGER_RESOURCE = 8
CLIENT_METRICS_RESOURCE = 16
GROUP_RESOURCE = 32


class _LogThrottle:
    """At most one line per ``interval_s``; the next line counts the ones left out. An S3
    outage fails every cold fetch of every consumer: one line each would bury the log."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._next = float("-inf")
        self._left_out = 0

    def error(self, message: str, *args: object) -> None:
        now = self.clock()
        if now < self._next:
            self._left_out += 1
            return
        if self._left_out:
            message += f" ({self._left_out} more since the last such line)"
        log.error(message, *args)
        self._next, self._left_out = now + self.interval_s, 0


_storage_errors = _LogThrottle(10.0)


def error_code(exc: BaseException) -> int:
    """The wire error code of an exception raised while serving one partition or topic
    (storage errors are logged at most once per 10 s)."""
    if isinstance(exc, KafkaError):
        return exc.errno
    if isinstance(exc, (StorageError, OSError)):
        _storage_errors.error("storage error: %s", exc)
        return KafkaStorageError.errno
    log.exception("unexpected error", exc_info=exc)
    return UnknownServerError.errno


def error_message(exc: BaseException) -> str:
    if isinstance(exc, KafkaError):
        detail = Exception.__str__(exc)
        return detail or exc.message
    return str(exc) or type(exc).__name__


def api_error_message(exc: BaseException) -> str | None:
    """The ``error_message`` Kafka's ``ApiError.fromThrowable`` would answer: None for a Kafka
    error raised without a message of its own (the client then shows its code's default text,
    e.g. Java's "This server does not host this topic-partition."), else
    :func:`error_message`."""
    if isinstance(exc, KafkaError) and not Exception.__str__(exc):
        return None
    return error_message(exc)


def once_each(items: Iterable[_T], name: Callable[[_T], str]) -> list[tuple[_T, bool]]:
    """The first of the request's ``items`` under each ``name``, each with whether the name
    appears more than once. Kafka's controller answers such a topic once, INVALID_REQUEST
    "Duplicate topic name.", and acts on none of its entries (CreateTopics, DeleteTopics,
    CreatePartitions)."""
    items = list(items)
    counts = Counter(map(name, items))
    first: dict[str, _T] = {}
    for item in items:
        first.setdefault(name(item), item)
    return [(item, counts[n] > 1) for n, item in first.items()]


def topic_name(item: dict[str, Any]) -> str:
    return str(item["name"])


DUPLICATE_TOPIC = "Duplicate topic name."


def outcome(error: BaseException | None) -> dict[str, Any]:
    """``error_code`` and ``error_message`` of one result (success when ``error`` is None)."""
    if error is None:
        return {"error_code": 0, "error_message": None}
    return {"error_code": error_code(error), "error_message": error_message(error)}


Alter = Callable[[str, list[dict[str, Any]]], Awaitable[None]]


INCREMENTAL_DELETE = 1  # IncrementalAlterConfigs' DELETE operation, the one taking no value


def check_config_shape(configs: list[dict[str, Any]], incremental: bool) -> None:
    """Kafka's ``ConfigAdminManager.preprocess`` checks of one resource's configs, made before
    authorization and before anything is applied: INVALID_REQUEST for a key named twice, and
    for a null value anywhere but on an incremental DELETE (names listed in request order)."""
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        raise InvalidRequestError("Error due to duplicate config keys")
    nulls = [
        c["name"]
        for c in configs
        if c["value"] is None
        and not (incremental and c.get("config_operation") == INCREMENTAL_DELETE)
    ]
    if nulls:
        raise InvalidRequestError("Null value not supported for : " + ", ".join(nulls))


async def alter_resource_configs(
    request: dict[str, Any],
    alter_topic: Alter,
    alter_broker: Alter,
    *,
    incremental: bool,
    alter_logger: Alter | None = None,
    not_served: Callable[[int, str], None] | None = None,
) -> dict[str, Any]:
    """The (Incremental)AlterConfigs response: ``alter_topic(topic, configs)`` per topic
    resource, ``alter_broker(name, configs)`` per broker resource (name empty: the cluster-wide
    default), ``alter_logger(name, configs)`` per BROKER_LOGGER resource when given, and
    ``not_served(type, name)`` (which raises) per CLIENT_METRICS or GROUP resource; any other
    resource type is INVALID_REQUEST "Unknown resource type N" (Kafka's ConfigAdminManager
    preprocess; legacy AlterConfigs passes no ``alter_logger``, so type 8 is one of those). A
    resource named twice in the request is answered INVALID_REQUEST each time and left as it
    is, and so is one failing :func:`check_config_shape` (Kafka's order: these checks first,
    then the resource type)."""
    named = Counter((r["resource_type"], r["resource_name"]) for r in request["resources"])
    responses = []
    for r in request["resources"]:
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": r["resource_type"],
            "resource_name": r["resource_name"],
        }
        try:
            if named[(r["resource_type"], r["resource_name"])] > 1:
                raise InvalidRequestError("Each resource must appear at most once.")
            check_config_shape(r["configs"], incremental)
            if r["resource_type"] == TOPIC_RESOURCE:
                await alter_topic(r["resource_name"], r["configs"])
            elif r["resource_type"] == BROKER_RESOURCE:
                await alter_broker(r["resource_name"], r["configs"])
            elif r["resource_type"] == BROKER_LOGGER_RESOURCE and alter_logger is not None:
                await alter_logger(r["resource_name"], r["configs"])
            elif (
                r["resource_type"] in (CLIENT_METRICS_RESOURCE, GROUP_RESOURCE)
                and not_served is not None
            ):
                not_served(r["resource_type"], r["resource_name"])
            else:
                raise InvalidRequestError(f"Unknown resource type {r['resource_type']}")
        except Exception as e:
            result["error_code"] = error_code(e)
            result["error_message"] = error_message(e)
        responses.append(result)
    return {"throttle_time_ms": 0, "responses": responses}


def require(
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
    error: type[KafkaError],
) -> None:
    """Raise ``error`` unless the request's principal may do ``operation`` on the resource
    (always allowed without an authorizer)."""
    if not ctx.authorize(operation, resource_type, name):
        raise error(f"{ctx.principal} may not {operation.name} {resource_type.name} {name}")


def require_topic(ctx: RequestContext, operation: AclOperation, topic: str) -> None:
    require(ctx, operation, ResourceType.TOPIC, topic, TopicAuthorizationFailedError)


def require_cluster(ctx: RequestContext, operation: AclOperation) -> None:
    require(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME, ClusterAuthorizationFailedError)


def alter_not_served(ctx: RequestContext, resource_type: int, name: str) -> None:
    """A CLIENT_METRICS or GROUP resource of (Incremental)AlterConfigs: Kafka's authorization
    (ALTER_CONFIGS on the cluster; on the group), then INVALID_REQUEST, as this broker keeps no
    such configs."""
    if resource_type == GROUP_RESOURCE:
        require(ctx, AclOperation.ALTER_CONFIGS, ResourceType.GROUP, name, GroupAuthError)
        raise InvalidRequestError("Config type groups is not supported by this broker")
    require_cluster(ctx, AclOperation.ALTER_CONFIGS)
    raise InvalidRequestError("Config type client-metrics is not supported by this broker")


def hosted_partition(ctx: RequestContext, tp: TopicPartition) -> Partition:
    """The partition ``tp`` of this broker: KAFKA_STORAGE_ERROR for an offline one (its log
    failed to open), NOT_LEADER_OR_FOLLOWER for one the cluster knows but this broker does not
    host, UNKNOWN_TOPIC_OR_PARTITION for one it does not know (Kafka's getPartitionOrError)."""
    rm = ctx.broker.replica_manager
    partition = rm.partitions.get(tp)
    if partition is None:
        if tp in rm.offline:
            raise rm.offline_error(tp)
        topic = rm.coordinator.get_topic(tp.topic)
        if topic is not None and topic.has_partition(tp.partition):
            raise NotLeaderOrFollowerError(f"{tp} has no replica on this broker")
        raise UnknownTopicOrPartitionError(f"unknown partition {tp}")
    return partition


def live_brokers(ctx: RequestContext) -> list[tuple[int, str, int, str | None]]:
    """(node id, host, port, rack) of every registered broker, as Metadata and DescribeCluster
    list them: this broker at the advertised address of the listener the client came in on."""
    broker = ctx.broker
    brokers = []
    for b in broker.coordinator.brokers():
        host, port = ctx.endpoint if b.node_id == broker.config.node_id else (b.host, b.port)
        brokers.append((b.node_id, host, port, b.rack))
    return brokers
