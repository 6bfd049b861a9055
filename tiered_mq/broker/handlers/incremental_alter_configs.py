"""IncrementalAlterConfigs (44), v0-1: SET (0) / DELETE (1) / APPEND (2) / SUBTRACT (3) on a
topic's overrides, or on one level of dynamic broker configs (a BROKER resource: empty name for
the cluster-wide default, else this broker's id; broker/dynamic_config.py). APPEND and SUBTRACT
apply to list configs (Kafka's LIST type: ``cleanup.policy``, the throttled replica lists, the
broker's ``log.cleanup.policy``); on any other key they are refused as Kafka refuses them: a
topic's INVALID_CONFIG "Can't APPEND to key retention.ms because its type is not LIST." (the
controller's ConfigurationControlManager), a broker's INVALID_CONFIG "Config value append is not
allowed for config key: log.retention.ms" (an InvalidConfigurationException of the broker's
ConfigAdminManager.prepareIncrementalConfigs, before forwarding), and on a broker key Kafka's
KafkaConfig does not define (``retention.ms``, a misspelt name) INVALID_CONFIG "Unknown config
name: retention.ms" (Kafka 4.3, KAFKA-20129; earlier 4.x answered UNKNOWN_SERVER_ERROR). A key
counts as known when this broker knows it: its own, Kafka's unused ones, and the prefixes it
accepts (broker/config.py).
The result is validated as a whole before it is stored; DELETE of a broker config brings back
the level below (the cluster-wide default, then ``--config``, then Kafka's default). A topic
resource is judged in the order of Kafka's controller (ConfigurationControlManager): APPEND or
SUBTRACT on a key that is not a list, then the resulting values (INVALID_CONFIG, a topic that
does not exist having no overrides), then the topic's existence (UNKNOWN_TOPIC_OR_PARTITION
"The topic 'x' does not exist."), so that a bad value is INVALID_CONFIG whether the topic exists
or not, as the legacy AlterConfigs (TopicRegistry.set_configs) answers it too.

Before any of it, Kafka's preprocess checks (``_common.check_config_shape``): a key named twice
in one resource (even SET then DELETE), a null value with SET, APPEND or SUBTRACT, or a resource
named twice in the request is INVALID_REQUEST, and nothing of that resource is applied. A topic
name that is not a legal one answers INVALID_TOPIC_EXCEPTION (Kafka's Topic.validate).

A BROKER_LOGGER resource (8, named by this broker's id) sets log levels (broker/broker_loggers.py,
Kafka's RuntimeLoggerManager): ALTER_CONFIGS on the cluster, then every operation checked, then
applied unless ``validate_only``. CLIENT_METRICS and GROUP resources are authorized as Kafka
does, then INVALID_REQUEST (``_common.alter_not_served``); any other type is INVALID_REQUEST."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tiered_mq.broker import broker_loggers
from tiered_mq.broker.acl.binding import AclOperation
from tiered_mq.broker.config import (
    _BROKER_PREFIXES,
    _KAFKA_UNUSED_PREFIXES,
    BROKER_DEFAULTS,
    KAFKA_UNUSED,
    TIME_SYNONYMS,
    TOPIC_SYNONYMS,
    UNSUPPORTED,
)
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.dynamic_config import entity_of
from tiered_mq.broker.handlers._common import (
    alter_not_served,
    alter_resource_configs,
    require_cluster,
    require_topic,
)
from tiered_mq.broker.topic_names import validate_topic_name
from tiered_mq.errors import (
    InvalidConfigError,
    InvalidRequestError,
    KafkaError,
)
from tiered_mq.hot.log_config import DEFAULTS, config_type
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}  # Kafka's AlterConfigOp.OpType names
TOPIC_LISTS = frozenset(name for name in DEFAULTS if config_type(name) == "LIST")
BROKER_LISTS = frozenset({"log.cleanup.policy"})
NotList = Callable[[str, int], KafkaError]  # (key, APPEND or SUBTRACT) -> the refusal


def topic_not_list(name: str, kind: int) -> KafkaError:
    """Kafka's controller (ConfigurationControlManager) on a topic key that is not a LIST."""
    return InvalidConfigError(f"Can't {OP_NAMES[kind]} to key {name} because its type is not LIST.")


def kafka_broker_key(name: str) -> bool:
    """Whether ``name`` is a broker config of Kafka's, as far as this broker knows them."""
    return (
        any(name in keys for keys in (BROKER_DEFAULTS, TOPIC_SYNONYMS, TIME_SYNONYMS, UNSUPPORTED))
        or name in KAFKA_UNUSED
        or name.startswith(_BROKER_PREFIXES + _KAFKA_UNUSED_PREFIXES)
    )


def broker_not_list(name: str, kind: int) -> KafkaError:
    """Kafka's broker (ConfigAdminManager.prepareIncrementalConfigs) on a broker key that is not
    a LIST, refused before the change is forwarded to the controller: INVALID_CONFIG, naming an
    unknown key as such."""
    if not kafka_broker_key(name):
        return InvalidConfigError(f"Unknown config name: {name}")
    verb = OP_NAMES[kind].lower()
    return InvalidConfigError(f"Config value {verb} is not allowed for config key: {name}")


def apply_ops(
    current: dict[str, str],
    effective: dict[str, str],
    ops: list[dict[str, Any]],
    list_keys: frozenset[str] = TOPIC_LISTS,
    not_list: NotList = topic_not_list,
) -> dict[str, str]:
    """``current`` changed by ``ops`` (each key once, a value on all but DELETE: the handler's
    shape checks ran first); APPEND and SUBTRACT start from ``effective``'s value when
    ``current`` has none, and raise ``not_list(key, op)`` on a key not in ``list_keys``."""
    out = dict(current)
    for op in ops:
        name, value, kind = op["name"], op["value"], op["config_operation"]
        if kind == SET:
            out[name] = value
        elif kind == DELETE:
            out.pop(name, None)
        elif kind in (APPEND, SUBTRACT):
            if name not in list_keys:
                raise not_list(name, kind)
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
    config = ctx.broker.config

    async def alter_topic(name: str, entries: list[dict[str, Any]]) -> None:
        require_topic(ctx, AclOperation.ALTER_CONFIGS, name)
        validate_topic_name(name)  # Kafka's Topic.validate: INVALID_TOPIC_EXCEPTION, not unknown
        meta = registry.get_topic(name)
        # a topic that does not exist has no overrides: its operations and values are judged
        # first, then set_configs answers UNKNOWN_TOPIC_OR_PARTITION (Kafka's order)
        current, effective = (meta.configs, registry.effective_configs(name)) if meta else ({}, {})
        updated = apply_ops(current, effective, entries)
        await registry.set_configs(name, updated, validate_only)

    async def alter_broker(name: str, entries: list[dict[str, Any]]) -> None:
        require_cluster(ctx, AclOperation.ALTER_CONFIGS)
        entity = entity_of(name, config.node_id)

        def update(current: dict[str, str]) -> dict[str, str]:
            policy = config.topic_defaults.get("cleanup.policy", DEFAULTS["cleanup.policy"])
            effective = {"log.cleanup.policy": policy}
            return apply_ops(current, effective, entries, BROKER_LISTS, broker_not_list)

        await registry.set_broker_configs(entity, update, validate_only)

    async def alter_logger(name: str, entries: list[dict[str, Any]]) -> None:
        require_cluster(ctx, AclOperation.ALTER_CONFIGS)
        broker_loggers.check_node(name, config.node_id)
        broker_loggers.check(entries)
        if not validate_only:
            broker_loggers.apply(entries)

    async with registry.manifest_writes():  # one wait for the topic.json of every resource
        return await alter_resource_configs(
            request,
            alter_topic,
            alter_broker,
            incremental=True,
            alter_logger=alter_logger,
            not_served=lambda rtype, name: alter_not_served(ctx, rtype, name),
        )
