"""IncrementalAlterConfigs (44), v0-1: SET (0) / DELETE (1) / APPEND (2) / SUBTRACT (3) on a
topic's overrides; APPEND and SUBTRACT apply to list configs (``cleanup.policy``). The result is
validated as a whole before it is stored."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, error_message
from tiered_mq.errors import InvalidConfigError, InvalidRequestError, UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
TOPIC = 2
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
    responses = []
    for r in request["resources"]:
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": r["resource_type"],
            "resource_name": r["resource_name"],
        }
        try:
            if r["resource_type"] != TOPIC:
                raise InvalidRequestError("only topic configs can be altered")
            name = r["resource_name"]
            meta = registry.get_topic(name)
            if meta is None:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            updated = apply_ops(meta.configs, registry.effective_configs(name), r["configs"])
            await registry.set_configs(name, updated, validate_only)
        except Exception as e:
            result["error_code"] = error_code(e)
            result["error_message"] = error_message(e)
        responses.append(result)
    return {"throttle_time_ms": 0, "responses": responses}
