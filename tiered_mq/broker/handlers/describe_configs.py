"""DescribeConfigs (32), v1-3: topic (resource type 2) and broker (4) configs by Kafka name.

Topic configs resolve as Kafka's do: the topic's own override (source DYNAMIC_TOPIC_CONFIG 1),
else this broker's dynamic value of the broker default (DYNAMIC_BROKER_CONFIG 2), else the
cluster-wide dynamic one (DYNAMIC_DEFAULT_BROKER_CONFIG 3), else ``--config``
(STATIC_BROKER_CONFIG 4), else Kafka's default (DEFAULT_CONFIG 5); broker/dynamic_config.py.
With ``include_synonyms`` a config lists that chain, most specific first, the broker's entries
under the broker's name (``log.retention.ms``; ``log.retention.hours`` too when that was set),
as Kafka's ``kafka-configs.sh --describe --all`` shows.

The broker resource named by this broker's id lists every broker config (the dynamic ones too,
read-only false) resolved the same way from level 2 down; the one with an empty name (the
cluster-wide default, ``--entity-default``) lists only the configs set at that level, as Kafka
does. ``configuration_keys`` (null = all) filters the answer.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.config_entries import (
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    broker_chain,
    config_entry,
    topic_config_entries,
)
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.dynamic_config import DYNAMIC_CONFIGS, entity_of
from tiered_mq.broker.handlers._common import (
    error_code,
    error_message,
    require_cluster,
    require_topic,
)
from tiered_mq.broker.listener import is_sensitive
from tiered_mq.errors import InvalidRequestError, UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DESCRIBE_CONFIGS

TOPIC = 2
BROKER = 4


def topic_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    meta = ctx.broker.topic_registry.get_topic(name)
    if meta is None:
        raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
    return topic_config_entries(ctx.broker, meta.configs, synonyms)


def broker_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    config = ctx.broker.config
    if name == "":  # the cluster-wide default: only what is set there
        return [
            config_entry(key, [(key, value, DYNAMIC_DEFAULT_BROKER_CONFIG)], False, synonyms)
            for key, value in sorted(config.dynamic_default.items())
        ]
    entity_of(name, config.node_id)  # INVALID_REQUEST for another broker's id
    out = []
    for key in sorted(set(config.props) | DYNAMIC_CONFIGS):
        entry = config_entry(key, broker_chain(config, key), key not in DYNAMIC_CONFIGS, synonyms)
        if key == "listeners":  # with the bound ports
            entry["value"] = ",".join(map(str, ctx.broker.listeners))
        if is_sensitive(key):  # Kafka shows passwords as null
            entry["value"], entry["is_sensitive"], entry["synonyms"] = None, True, []
        out.append(entry)
    return out


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    synonyms = bool(request.get("include_synonyms", False))
    results = []
    for r in request["resources"]:
        rtype, rname = r["resource_type"], r["resource_name"]
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": rtype,
            "resource_name": rname,
            "configs": [],
        }
        try:
            if rtype == TOPIC:
                require_topic(ctx, AclOperation.DESCRIBE_CONFIGS, rname)
                configs = topic_configs(ctx, rname, synonyms)
            elif rtype == BROKER:
                require_cluster(ctx, AclOperation.DESCRIBE_CONFIGS)
                configs = broker_configs(ctx, rname, synonyms)
            else:
                raise InvalidRequestError(f"unsupported resource type {rtype}")
            keys = r.get("configuration_keys")
            if keys is not None:
                wanted = set(keys)
                configs = [c for c in configs if c["name"] in wanted]
            result["configs"] = configs
        except Exception as e:
            result["error_code"] = error_code(e)
            result["error_message"] = error_message(e)
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}
