"""Config entries as DescribeConfigs describes them (and CreateTopics v5+, for a new topic).

An entry is a dict of DescribeConfigs' response fields. Its value and ``config_source`` are the
head of its chain of synonyms, most specific first: the topic's override
(DYNAMIC_TOPIC_CONFIG 1), this broker's dynamic value (DYNAMIC_BROKER_CONFIG 2), the
cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG 3), ``--config``
(STATIC_BROKER_CONFIG 4), Kafka's default (DEFAULT_CONFIG 5); broker entries of a topic config
carry the broker's name (``log.retention.ms``). ``config_type`` is Kafka's ``ConfigDef.Type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tiered_mq.broker.config import BROKER_DEFAULTS, TIME_SYNONYMS, TOPIC_SYNONYMS, BrokerConfig
from tiered_mq.hot import log_config

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker

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
    "connections.max.idle.ms": "LONG",
    "socket.send.buffer.bytes": "INT",
    "socket.receive.buffer.bytes": "INT",
    "fetch.max.bytes": "INT",
    "remote.fetch.max.wait.ms": "INT",
    "remote.list.offsets.request.timeout.ms": "LONG",
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


def config_entry(name: str, chain: Chain, read_only: bool, synonyms: bool) -> dict[str, Any]:
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
        entry = config_entry(key, chain, False, synonyms)
        entry["value"] = value
        out.append(entry)
    return out
