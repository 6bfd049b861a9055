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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.config import BROKER_DEFAULTS, TIME_SYNONYMS, TOPIC_SYNONYMS, BrokerConfig
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
from tiered_mq.hot import log_config
from tiered_mq.protocol.api_versions import ApiKey

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker

API_KEY = ApiKey.DESCRIBE_CONFIGS

TOPIC = 2
BROKER = 4
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
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


Chain = list[tuple[str, str | None, int]]  # (name, value, source), most specific first


def _entry(name: str, chain: Chain, read_only: bool, synonyms: bool) -> dict[str, Any]:
    """One config: its value and source are the head of ``chain``."""
    _, value, source = chain[0]
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_default": source == DEFAULT_CONFIG,
        "is_sensitive": False,
        "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in chain] if synonyms else [],
        "config_type": _type_of(name, value),
        "documentation": None,
    }


_BROKER_NAMES = {topic: broker for broker, topic in TOPIC_SYNONYMS.items()}


def broker_chain(config: BrokerConfig, name: str) -> Chain:
    """Where broker config ``name`` comes from, most specific first: this broker's dynamic
    value, the cluster-wide dynamic one, ``--config`` (with the ``.hours``/``.minutes`` forms
    of a ``.ms`` config), the default."""
    topic = TOPIC_SYNONYMS.get(name)
    names = [name] + [k for k, (t, _) in TIME_SYNONYMS.items() if topic is not None and t == topic]
    chain: Chain = []
    for level, source in (
        (config.dynamic_broker, DYNAMIC_BROKER_CONFIG),
        (config.dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG),
        ({k: config.props[k] for k in config.overridden}, STATIC_BROKER_CONFIG),
    ):
        chain += [(n, level[n], source) for n in names if n in level]
    default = BROKER_DEFAULTS.get(name)
    if default is None and topic is not None:
        default = log_config.DEFAULTS[topic]
    if default is None and not chain:  # set by the broker itself (log.dirs)
        default = config.props.get(name)
    if default is not None or not chain:
        chain.append((name, default, DEFAULT_CONFIG))
    return chain


def topic_config_entries(
    broker: Broker, overrides: Mapping[str, str], synonyms: bool
) -> list[dict[str, Any]]:
    """Every config of a topic with these ``overrides``, each with its source (and the chain
    of synonyms when asked)."""
    effective = broker.replica_manager.log_config(dict(overrides)).to_properties()
    config = broker.config
    static = config.static_topic_defaults
    out = []
    for key, value in effective.items():
        broker_name = _BROKER_NAMES.get(key, key)
        chain: Chain = [(key, overrides[key], DYNAMIC_TOPIC_CONFIG)] if key in overrides else []
        for level, source in (
            (config.dynamic_broker, DYNAMIC_BROKER_CONFIG),
            (config.dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG),
        ):
            if broker_name in level:
                chain.append((broker_name, level[broker_name], source))
        if key in static:
            chain.append((broker_name, static[key], STATIC_BROKER_CONFIG))
        chain.append((broker_name, log_config.DEFAULTS[key], DEFAULT_CONFIG))
        entry = _entry(key, chain, False, synonyms)
        entry["value"] = value
        out.append(entry)
    return out


def topic_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    meta = ctx.broker.topic_registry.get_topic(name)
    if meta is None:
        raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
    return topic_config_entries(ctx.broker, meta.configs, synonyms)


def broker_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    config = ctx.broker.config
    if name == "":  # the cluster-wide default: only what is set there
        return [
            _entry(key, [(key, value, DYNAMIC_DEFAULT_BROKER_CONFIG)], False, synonyms)
            for key, value in sorted(config.dynamic_default.items())
        ]
    entity_of(name, config.node_id)  # INVALID_REQUEST for another broker's id
    out = []
    for key in sorted(set(config.props) | DYNAMIC_CONFIGS):
        entry = _entry(key, broker_chain(config, key), key not in DYNAMIC_CONFIGS, synonyms)
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
