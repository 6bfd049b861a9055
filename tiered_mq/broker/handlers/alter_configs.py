"""AlterConfigs (33), v0-1: replaces a topic's overrides with the given set (Kafka's
non-incremental semantics: keys not listed return to their defaults). Values are validated
through ``LogConfig.from_properties`` (INVALID_CONFIG naming the key). Broker resources are
read-only here (INVALID_REQUEST)."""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, error_message
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.ALTER_CONFIGS
TOPIC = 2


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    validate_only = bool(request.get("validate_only", False))
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
            configs = {c["name"]: c["value"] for c in r["configs"]}
            await ctx.broker.topic_registry.set_configs(r["resource_name"], configs, validate_only)
        except Exception as e:
            result["error_code"] = error_code(e)
            result["error_message"] = error_message(e)
        responses.append(result)
    return {"throttle_time_ms": 0, "responses": responses}
