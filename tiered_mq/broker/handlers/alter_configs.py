"""AlterConfigs (33), v0-1: replaces a topic's overrides with the given set (Kafka's
non-incremental semantics: keys not listed return to their defaults). Values are validated
through ``LogConfig.from_properties`` (INVALID_CONFIG naming the key). Broker resources are
read-only here (INVALID_REQUEST)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import alter_topic_configs, require_topic
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ALTER_CONFIGS


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))

    async def alter(name: str, entries: list[dict[str, Any]]) -> None:
        require_topic(ctx, AclOperation.ALTER_CONFIGS, name)
        configs = {c["name"]: c["value"] for c in entries}
        await ctx.broker.topic_registry.set_configs(name, configs, validate_only)

    return await alter_topic_configs(request, alter)
