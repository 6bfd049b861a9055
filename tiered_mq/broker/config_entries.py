"""Config entries as DescribeConfigs describes them (and CreateTopics v5+, for a new topic).

An entry is a dict of DescribeConfigs' response fields. Its value and ``config_source`` are the
head of its chain of synonyms, most specific first: the topic's override
(DYNAMIC_TOPIC_CONFIG 1), this broker's dynamic value (DYNAMIC_BROKER_CONFIG 2), the
cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG 3), ``--config``
(STATIC_BROKER_CONFIG 4), Kafka's default (DEFAULT_CONFIG 5); broker entries of a topic config
carry the broker's name (``log.retention.ms``). ``config_type`` is Kafka's ``ConfigDef.Type``;
``documentation`` is broker/config_docs.py's line.

Time configs have several broker names (Kafka's ``brokerConfigSynonyms``, the lists of its
``ServerTopicConfigSynonyms``): ``log.retention.ms``, ``.minutes`` and ``.hours``;
``log.roll.ms`` and ``.hours``; ``log.roll.jitter.ms`` and ``.hours``; ``log.flush.interval.ms``
and ``log.flush.scheduler.interval.ms``, in that order of precedence. At each level all the
names set there are listed, in that order; Kafka's defaults are on the last
(``log.retention.hours=168``, ``log.roll.jitter.hours=0``,
``log.flush.scheduler.interval.ms=9223372036854775807``; the others have none, so null). A broker
config's own entry drops the synonyms before its own name, as Kafka does: ``log.retention.hours``
shows its own value even when ``log.retention.ms`` is set, and ``log.retention.ms`` is null
(DEFAULT_CONFIG) unless set itself. A topic config lists them all (``retention.ms`` of a topic
without an override: DEFAULT_CONFIG ``log.retention.hours=168``); Kafka drops there too, which
leaves the synonyms empty unless ``log.retention.ms`` is set somewhere, hiding which name the
value came from. A topic config no broker config defaults (Kafka's
``CONFIGS_WITH_NO_SERVER_DEFAULTS``: ``remote.storage.enable``, ``remote.log.copy.disable``,
``remote.log.delete.on.disable``, the two ``*.replication.throttled.replicas``) has no synonym
but its topic override, and source DEFAULT_CONFIG without one, as in Kafka; tiered-mq's own
``--config`` by the topic name, which Kafka has not, shows as STATIC_BROKER_CONFIG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tiered_mq.broker.config import (
    BROKER_DEFAULTS,
    BROKER_NAMES,
    TIME_SYNONYMS,
    TOPIC_SYNONYMS,
    BrokerConfig,
)
from tiered_mq.broker.config_docs import documentation
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
    "offsets.retention.check.interval.ms": "LONG",
    "offsets.load.buffer.size": "INT",
    "offset.metadata.max.bytes": "INT",
    "log.retention.hours": "INT",
    "log.retention.minutes": "INT",
    "log.roll.hours": "INT",
    "log.roll.jitter.hours": "INT",
    "log.flush.scheduler.interval.ms": "LONG",
    "log.retention.check.interval.ms": "LONG",
    "log.cleaner.backoff.ms": "LONG",
    "log.cleaner.dedupe.buffer.size": "LONG",
    "transaction.state.log.replication.factor": "SHORT",
    "transaction.state.log.segment.bytes": "INT",
    "transaction.max.timeout.ms": "INT",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "INT",
    "transactional.id.expiration.ms": "INT",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "INT",
    "producer.id.expiration.ms": "INT",
    "producer.id.expiration.check.interval.ms": "INT",
    "remote.log.manager.task.interval.ms": "LONG",
    "remote.log.manager.task.retry.backoff.ms": "LONG",
    "remote.log.manager.task.retry.backoff.max.ms": "LONG",
    "remote.log.index.file.cache.total.size.bytes": "LONG",
    "sasl.server.max.receive.size": "INT",
    "group.min.session.timeout.ms": "INT",
    "group.max.session.timeout.ms": "INT",
    "group.initial.rebalance.delay.ms": "INT",
    "group.max.size": "INT",
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
    """One config: its value and source are the head of ``chain`` (an empty one: null,
    DEFAULT_CONFIG, as Kafka's entry with no synonym)."""
    _, value, source = chain[0] if chain else (name, None, DEFAULT_CONFIG)
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_default": source == DEFAULT_CONFIG,
        "is_sensitive": False,
        "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in chain] if synonyms else [],
        "config_type": _type_of(name, value),
        "documentation": documentation(name),
    }


def broker_synonyms(name: str) -> list[str]:
    """Every broker name of the setting ``name`` is one of, most precedent first (module
    docstring): ``log.retention.ms``, ``log.retention.minutes``, ``log.retention.hours`` for
    any of the three (``log.flush.interval.ms``, ``log.flush.scheduler.interval.ms`` for either);
    ``[name]`` for a config with one name."""
    topic = TOPIC_SYNONYMS.get(name) or TIME_SYNONYMS.get(name, (None, 0))[0]
    if topic is None:
        return [name]
    coarse = sorted((unit, k) for k, (t, unit) in TIME_SYNONYMS.items() if t == topic)
    return [BROKER_NAMES[topic]] + [k for _, k in coarse]


#: broker configs whose Kafka default is null (KafkaConfig's ``define(..., null, ...)``): unset
#: here they are ``""`` in ``BROKER_DEFAULTS`` (meaning none), and DescribeConfigs shows null, as
#: Kafka does. ``authorizer.class.name`` is not one: Kafka's default is the empty string.
KAFKA_NULL_DEFAULTS = frozenset(
    {
        "advertised.listeners",
        "advertised.host.name",
        "broker.rack",
        "ssl.keystore.location",
        "ssl.key.password",
        "ssl.truststore.location",
        "sasl.jaas.config",
        "zookeeper.connect",
        "zookeeper.connection.timeout.ms",
    }
)


def broker_default(name: str) -> str | None:
    """Kafka's default of broker config ``name`` (None: it has none, as ``log.retention.ms``
    and ``KAFKA_NULL_DEFAULTS``)."""
    if name in KAFKA_NULL_DEFAULTS:
        return None
    if name in BROKER_DEFAULTS:
        return BROKER_DEFAULTS[name]
    topic = TOPIC_SYNONYMS.get(name)
    if topic is None or len(broker_synonyms(name)) > 1:  # a time config: the coarsest has it
        return None
    return log_config.DEFAULTS[topic]


def _synonym_chain(config: BrokerConfig, names: list[str]) -> Chain:
    """The values of ``names`` at every broker level, most specific level first."""
    chain: Chain = []
    for level, source in (
        (config.dynamic_broker, DYNAMIC_BROKER_CONFIG),
        (config.dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG),
        ({k: config.props[k] for k in config.overridden}, STATIC_BROKER_CONFIG),
    ):
        chain += [(n, level[n], source) for n in names if n in level]
    for n in names:
        default = broker_default(n)
        if default is not None:
            chain.append((n, default, DEFAULT_CONFIG))
    return chain


def broker_chain(config: BrokerConfig, name: str) -> Chain:
    """Where broker config ``name`` comes from, most specific first: this broker's dynamic
    value, the cluster-wide dynamic one, ``--config``, the default; synonyms listed before
    ``name`` itself are dropped (module docstring). Never empty: a config set nowhere and
    without a default is ``(name, <the broker's own value>, DEFAULT_CONFIG)`` (``log.dirs``), or
    ``(name, None, DEFAULT_CONFIG)`` for one of ``KAFKA_NULL_DEFAULTS``."""
    chain = _synonym_chain(config, broker_synonyms(name))
    while chain and chain[0][0] != name:
        chain.pop(0)
    if chain:
        return chain
    value = None if name in KAFKA_NULL_DEFAULTS else config.props.get(name)
    return [(name, value, DEFAULT_CONFIG)]


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
        chain: Chain = [(key, overrides[key], DYNAMIC_TOPIC_CONFIG)] if key in overrides else []
        if key in BROKER_NAMES:
            chain += _synonym_chain(config, broker_synonyms(BROKER_NAMES[key]))
        elif key in static:  # no broker config: only --config by the topic name sets one
            chain.append((key, static[key], STATIC_BROKER_CONFIG))
        entry = config_entry(key, chain, False, synonyms)
        entry["value"] = value
        out.append(entry)
    return out
