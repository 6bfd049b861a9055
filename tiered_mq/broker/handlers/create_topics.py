"""CreateTopics (19), v2-4.

Per topic: name rules, partitions (-1 = ``num.partitions``), replication factor (-1 =
default; at most the live brokers), explicit ``assignments`` (with -1 partitions and
replication factor; partitions 0, 1, ... each once; replicas checked as Kafka's
``validateManualPartitionAssignment`` does, INVALID_REPLICA_ASSIGNMENT; stored as given) and
configs validated through ``LogConfig.from_properties``. Errors carry a message naming the
problem (INVALID_CONFIG names the key). ``validate_only`` checks everything and creates
nothing. The topics that pass the request's checks go to the registry together, which registers
them in one coordinator write (topic_registry.py), each still answered on its own. A topic
named more than once in one request is answered once, INVALID_REQUEST
"Duplicate topic name.", and not created (as Kafka's controller does; librdkafka refuses a
response naming a topic twice). A request that would make more than 10,000 partitions in all
is refused whole (POLICY_VIOLATION for every topic, Kafka's limit), before any assignment is
built. From v5 a created topic (or one that would be, with ``validate_only``) is described in
the answer: partitions, replication factor and every config with its source, as
DescribeConfigs gives them (with an authorizer, only to a principal that may DESCRIBE_CONFIGS
it; another gets TOPIC_AUTHORIZATION_FAILED as ``topic_config_error_code``, as in Kafka); v7
adds its topic id.
"""

from __future__ import annotations

import uuid
from typing import Any

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.config_entries import topic_config_entries
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import (
    DUPLICATE_TOPIC,
    error_code,
    error_message,
    once_each,
    require_topic,
    topic_name,
)
from tiered_mq.broker.topic_registry import (
    CreatedTopic,
    TopicRequest,
    check_partitions_per_request,
)
from tiered_mq.errors import (
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    TopicAuthorizationFailedError,
)
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.CREATE_TOPICS
DESCRIBED_FROM_VERSION = 5


def _assignments(t: dict[str, Any]) -> list[list[int]]:
    """The request's manual assignments as the replicas of partition 0, 1, ... (Kafka's
    checks: -1 partitions and replication factor, each partition once, 0-based and
    consecutive); each list is checked by the registry."""
    if t["replication_factor"] != -1:
        raise InvalidRequestError(
            "A manual partition assignment was specified, but replication factor was not set to -1."
        )
    if t["num_partitions"] != -1:
        raise InvalidRequestError(
            "A manual partition assignment was specified, but numPartitions was not set to -1."
        )
    by_index: dict[int, list[int]] = {}
    for a in t["assignments"]:
        if a["partition_index"] in by_index:
            raise InvalidReplicaAssignmentError(
                f"Found multiple manual partition assignments for partition {a['partition_index']}"
            )
        by_index[a["partition_index"]] = list(a["broker_ids"])
    if sorted(by_index) != list(range(len(by_index))):
        raise InvalidReplicaAssignmentError(
            "partitions should be a consecutive 0-based integer sequence"
        )
    return [by_index[p] for p in range(len(by_index))]


def _described(ctx: RequestContext, created: CreatedTopic) -> dict[str, Any]:
    """The v5+ fields of a created topic's result. Its partitions, replication factor and
    configs only for a principal that may DESCRIBE_CONFIGS the topic; for another, as Kafka
    answers, TOPIC_AUTHORIZATION_FAILED in ``topic_config_error_code``, -1 and no configs."""
    topic_id = uuid.UUID(hex=created.topic_id) if created.topic_id else uuid.UUID(int=0)
    if not ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, created.name):
        return {
            "topic_id": topic_id,
            "topic_config_error_code": TopicAuthorizationFailedError.errno,
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": [],
        }
    configs = topic_config_entries(ctx.broker, created.configs, synonyms=False)
    return {
        "topic_id": topic_id,
        "num_partitions": created.partitions,
        "replication_factor": created.replication_factor,
        "configs": [
            {k: c[k] for k in ("name", "value", "read_only", "config_source", "is_sensitive")}
            for c in configs
        ],
    }


def _request(t: dict[str, Any]) -> TopicRequest:
    """The registry's form of one topic of the request (raises on bad assignments)."""
    assignments = _assignments(t) if t.get("assignments") else None
    configs = {c["name"]: c["value"] for c in t.get("configs") or []}
    return TopicRequest(
        t["name"], t["num_partitions"], configs, t["replication_factor"], assignments
    )


def _requested(ctx: RequestContext, t: dict[str, Any]) -> int:
    """How many partitions ``t`` asks for (0 for an invalid count: refused on its own)."""
    if t.get("assignments"):
        return len(t["assignments"])
    return max(ctx.broker.topic_registry.resolve_partitions(int(t["num_partitions"])), 0)


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))
    total = sum(_requested(ctx, t) for t in request["topics"])
    results: list[dict[str, Any]] = []
    asked: list[TopicRequest] = []
    asked_results: list[dict[str, Any]] = []
    for t, duplicate in once_each(request["topics"], topic_name):
        name = t["name"]
        result: dict[str, Any] = {"name": name, "error_code": 0, "error_message": None}
        results.append(result)
        try:
            if duplicate:
                raise InvalidRequestError(DUPLICATE_TOPIC)
            check_partitions_per_request(total)  # the whole request's, for every topic
            if not ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
                require_topic(ctx, AclOperation.CREATE, name)
            asked.append(_request(t))
            asked_results.append(result)
        except Exception as e:
            _failed(result, e)
    created = await ctx.broker.topic_registry.create_topics(asked, validate_only)
    for result, outcome in zip(asked_results, created, strict=True):
        if isinstance(outcome, Exception):
            _failed(result, outcome)
        elif ctx.api_version >= DESCRIBED_FROM_VERSION:
            result.update(_described(ctx, outcome))
    return {"throttle_time_ms": 0, "topics": results}


def _failed(result: dict[str, Any], error: Exception) -> None:
    result["error_code"] = error_code(error)
    result["error_message"] = error_message(error)
