"""IncrementalAlterConfigs (44), v0-1: SET (0) / DELETE (1) / APPEND (2) / SUBTRACT (3) on a
topic's overrides; APPEND and SUBTRACT apply to list configs (``cleanup.policy``). The result is
validated as a whole before it is stored."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import alter_topic_configs, require_topic
from tiered_mq.errors import InvalidConfigError, InvalidRequestError, UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def apply_ops(
    current: dict[str, str], effective: dict[str, str], ops: list[dict[str, Any]]
) -> dict[str, str]:
    out = dict(current)
    for op in ops:
        name, value, kind = op["name"], op["value"], op["config_operation"]
        if kind == SET:
            if value is None:
                raise InvalidConfigError(f"{name}: SET needs a value")
            out[name] = value
        elif kind == DELETE:
            out.pop(name, None)
        elif kind in (APPEND, SUBTRACT):
            if name != "cleanup.policy":
                raise InvalidConfigError(f"{name}: APPEND/SUBTRACT apply to list configs only")
            base = out.get(name, effective.get(name, ""))
            items = [x for x in base.split(",") if x]
            for v in (value or "").split(","):
                if kind == APPEND and v and v not in items:
                    items.append(v)
                elif kind == SUBTRACT and v in items:
                    items.remove(v)
            out[name] = ",".join(items)
        else:
            raise InvalidRequestError(f"{name}: unknown config operation {kind}")
    return out


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))
    registry = ctx.broker.topic_registry

    async def alter(name: str, entries: list[dict[str, Any]]) -> None:
        require_topic(ctx, AclOperation.ALTER_CONFIGS, name)
        meta = registry.get_topic(name)
        if meta is None:
            raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
        updated = apply_ops(meta.configs, registry.effective_configs(name), entries)
        await registry.set_configs(name, updated, validate_only)

    return await alter_topic_configs(request, alter)
