"""DescribeConfigs (32), v1-3: topic (resource type 2) and broker (4) configs by Kafka name.

Topic configs resolve as Kafka's do: the topic's own override (source DYNAMIC_TOPIC_CONFIG 1),
else the broker's default for it from ``--config`` (STATIC_BROKER_CONFIG 4), else Kafka's
default (DEFAULT_CONFIG 5). With ``include_synonyms`` a topic config lists that chain, most
specific first, the broker's entries under the broker's name (``log.retention.ms``), as
Kafka's ``kafka-configs.sh --describe --all`` shows. Broker configs are STATIC_BROKER_CONFIG
when set on the command line, else DEFAULT_CONFIG, and read-only. ``configuration_keys``
(null = all) filters the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.config import TOPIC_SYNONYMS
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import (
    error_code,
    error_message,
    require_cluster,
    require_topic,
)
from tiered_mq.broker.listener import is_sensitive
from tiered_mq.errors import (
    InvalidRequestError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.hot import log_config
from tiered_mq.protocol.api_versions import ApiKey

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker

API_KEY = ApiKey.DESCRIBE_CONFIGS

TOPIC = 2
BROKER = 4
DYNAMIC_TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
# config_type (v3): Kafka's ConfigDef.Type ids
CONFIG_TYPES = {
    "BOOLEAN": 1,
    "STRING": 2,
    "INT": 3,
    "SHORT": 4,
    "LONG": 5,
    "DOUBLE": 6,
    "LIST": 7,
    "CLASS": 8,
    "PASSWORD": 9,
}
# broker configs whose type the value does not show (KafkaConfig's declarations)
_BROKER_TYPES = {
    "broker.id": "INT",
    "num.partitions": "INT",
    "default.replication.factor": "INT",
    "message.max.bytes": "INT",
    "socket.request.max.bytes": "INT",
    "socket.send.buffer.bytes": "INT",
    "socket.receive.buffer.bytes": "INT",
    "fetch.max.bytes": "INT",
    "offsets.topic.num.partitions": "INT",
    "offsets.topic.replication.factor": "SHORT",
    "offsets.topic.segment.bytes": "INT",
    "offsets.retention.minutes": "INT",
    "group.min.session.timeout.ms": "INT",
    "group.max.session.timeout.ms": "INT",
    "group.initial.rebalance.delay.ms": "INT",
    "transaction.state.log.num.partitions": "INT",
    "producer.id.block.size": "INT",
    "zookeeper.session.timeout.ms": "INT",
    "zookeeper.connection.timeout.ms": "INT",
    "listeners": "STRING",
    "advertised.listeners": "STRING",
    "log.dirs": "LIST",
    "log.cleanup.policy": "LIST",
    "sasl.enabled.mechanisms": "LIST",
    "ssl.enabled.protocols": "LIST",
    "ssl.key.password": "PASSWORD",
    "sasl.jaas.config": "PASSWORD",
    **{
        broker: log_config.config_type(topic) or "STRING"
        for broker, topic in TOPIC_SYNONYMS.items()
    },
}


def _type_of(name: str, value: str | None) -> int:
    """A topic config's type from its declaration; a broker config's from ``_BROKER_TYPES``,
    else guessed from its value (tiered-mq's own broker settings)."""
    declared = log_config.config_type(name) or _BROKER_TYPES.get(name)
    if declared is not None:
        return CONFIG_TYPES[declared]
    if value in ("true", "false"):
        return CONFIG_TYPES["BOOLEAN"]
    if value is None:
        return CONFIG_TYPES["STRING"]
    try:
        int(value)
        return CONFIG_TYPES["LONG"]
    except ValueError:
        pass
    try:
        float(value)
        return CONFIG_TYPES["DOUBLE"]
    except ValueError:
        return CONFIG_TYPES["STRING"]


def _entry(
    name: str, value: str | None, source: int, read_only: bool, synonyms: bool
) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_default": source == DEFAULT_CONFIG,
        "is_sensitive": False,
        "synonyms": [{"name": name, "value": value, "source": source}] if synonyms else [],
        "config_type": _type_of(name, value),
        "documentation": None,
    }


_BROKER_NAMES = {topic: broker for broker, topic in TOPIC_SYNONYMS.items()}


def topic_config_entries(
    broker: Broker, overrides: Mapping[str, str], synonyms: bool
) -> list[dict[str, Any]]:
    """Every config of a topic with these ``overrides``, each with its source (and the chain
    of synonyms when asked)."""
    effective = broker.replica_manager.log_config(dict(overrides)).to_properties()
    defaults = broker.config.topic_defaults
    out = []
    for key, value in effective.items():
        broker_name = _BROKER_NAMES.get(key, key)
        chain = [(key, overrides[key], DYNAMIC_TOPIC_CONFIG)] if key in overrides else []
        if key in defaults:
            chain.append((broker_name, defaults[key], STATIC_BROKER_CONFIG))
        chain.append((broker_name, log_config.DEFAULTS[key], DEFAULT_CONFIG))
        entry = _entry(key, value, chain[0][2], False, False)
        if synonyms:
            entry["synonyms"] = [{"name": n, "value": v, "source": src} for n, v, src in chain]
        out.append(entry)
    return out


def topic_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    meta = ctx.broker.topic_registry.get_topic(name)
    if meta is None:
        raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
    return topic_config_entries(ctx.broker, meta.configs, synonyms)


def broker_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    config = ctx.broker.config
    if name not in ("", str(config.node_id)):
        raise InvalidRequestError(f"broker '{name}' is not this broker ({config.node_id})")
    out = []
    for key, value in sorted(config.props.items()):
        source = DEFAULT_CONFIG if config.is_default(key) else STATIC_BROKER_CONFIG
        if key == "listeners":  # with the bound ports
            value = ",".join(map(str, ctx.broker.listeners))
        entry = _entry(key, value, source, True, synonyms)
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
