"""AlterConfigs (33), v0-1: replaces a resource's configs with the given set (Kafka's
non-incremental semantics: keys not listed return to the level below).

A topic's overrides are validated through ``LogConfig.from_properties`` (INVALID_CONFIG naming
the key); a topic name that is not a legal one ("", too long, other characters) answers
INVALID_TOPIC_EXCEPTION, as DescribeConfigs and Kafka's Topic.validate do. A broker resource
(empty name: the cluster-wide default; else this broker's id) replaces that level's dynamic
broker configs (broker/dynamic_config.py), with ALTER_CONFIGS on the cluster. A key listed
twice, a null value or a resource named twice is INVALID_REQUEST and nothing of that resource
changes (Kafka's preprocess, ``_common.check_config_shape``). BROKER_LOGGER resources (8) are
INVALID_REQUEST "Unknown resource type 8": log levels change through IncrementalAlterConfigs
only (KIP-412), as Kafka's ConfigAdminManager answers."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.dynamic_config import entity_of
from tiered_mq.broker.handlers._common import (
    alter_not_served,
    alter_resource_configs,
    require_cluster,
    require_topic,
)
from tiered_mq.broker.topic_names import validate_topic_name
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ALTER_CONFIGS


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))
    registry = ctx.broker.topic_registry

    async def alter_topic(name: str, entries: list[dict[str, Any]]) -> None:
        require_topic(ctx, AclOperation.ALTER_CONFIGS, name)
        validate_topic_name(name)  # Kafka's Topic.validate: INVALID_TOPIC_EXCEPTION, not unknown
        configs = {c["name"]: c["value"] for c in entries}
        await registry.set_configs(name, configs, validate_only)

    async def alter_broker(name: str, entries: list[dict[str, Any]]) -> None:
        require_cluster(ctx, AclOperation.ALTER_CONFIGS)
        entity = entity_of(name, ctx.broker.config.node_id)
        configs = {c["name"]: c["value"] for c in entries}
        await registry.set_broker_configs(entity, lambda _current: configs, validate_only)

    async with registry.manifest_writes():  # one wait for the topic.json of every resource
        return await alter_resource_configs(
            request,
            alter_topic,
            alter_broker,
            incremental=False,
            not_served=lambda rtype, name: alter_not_served(ctx, rtype, name),
        )
