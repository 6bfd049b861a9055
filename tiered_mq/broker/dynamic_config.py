"""Dynamic broker configs (Kafka's KIP-226): broker defaults of topic configs changed at runtime.

Two levels, as in Kafka. The cluster-wide default is the BROKER resource with an empty name
(``kafka-configs.sh --entity-type brokers --entity-default``), stored as entity ``<default>``;
one broker's is the resource named by its ``broker.id`` (``--entity-name 1``), stored under that
id. Storage is the coordinator's (``/config/brokers/<default>`` and ``/config/brokers/<id>`` in
ZooKeeper, where Kafka kept them; ``broker_configs`` in cluster.json). A topic config resolves,
most specific first (the order DescribeConfigs lists as synonyms)::

    the topic's override                   DYNAMIC_TOPIC_CONFIG (1)
    this broker's dynamic value            DYNAMIC_BROKER_CONFIG (2)
    the cluster-wide dynamic default       DYNAMIC_DEFAULT_BROKER_CONFIG (3)
    --config (static)                      STATIC_BROKER_CONFIG (4)
    Kafka's default                        DEFAULT_CONFIG (5)

Which keys: the broker names of topic configs, Kafka's ``DynamicLogConfig`` (the first synonym
of each: ``log.retention.ms``, not ``log.retention.hours``), and ``producer.id.expiration.ms``
(Kafka's ``DynamicProducerStateManagerConfig``, read at each expiration check), listed in
``DYNAMIC_CONFIGS``. Every partition takes a change at once, without a restart. Any other key
is refused as Kafka refuses a key outside its dynamic set: INVALID_REQUEST "Cannot update these
configs dynamically: [key]". That includes settings Kafka can change at runtime (log cleaner
threads and I/O rate, socket and quota settings, remote log manager rates): this broker reads
those once at start, and storing a value it would ignore would mislead. A value a key cannot take is
INVALID_REQUEST naming the key, as in Kafka (its ConfigAdminManager turns every validation
failure of a broker config into INVALID_REQUEST; KAFKA-13609 left it so for compatibility); so
is a change that would leave some topic with an invalid config (``log.retention.ms`` below a
tiered topic's own ``local.retention.ms``), naming the topic. On a broker with a cold tier the
defaults themselves must keep local retention within retention (Kafka's
``validateBrokerLogConfigValues``: ``log.local.retention.ms`` not above ``log.retention.ms``, nor
-1 while it is finite).

Crash behaviour: the coordinator's write is the commit point (durable before the answer); the
partitions are then reconfigured in memory. A crash in between loses nothing: the next start
loads the stored values before it opens any partition. A stored value that no longer validates
at start (a static config changed meanwhile) is logged and left out, as Kafka does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from tiered_mq.broker.config import (
    DEFAULT_BROKER_ENTITY,
    MIN_VALUES,
    TOPIC_SYNONYMS,
    BrokerConfig,
)
from tiered_mq.broker.remote_tier import tiered_storage_enabled
from tiered_mq.coordination.base import Coordinator
from tiered_mq.errors import InvalidConfigError, InvalidRequestError
from tiered_mq.hot.log_config import (
    LogConfig,
    validate_local_retention,
    validate_no_remote_storage_for_compacted_topic,
)

if TYPE_CHECKING:
    from tiered_mq.broker.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

#: dynamic broker configs that are not topic defaults (their lower bound: config.MIN_VALUES)
BROKER_ONLY_DYNAMIC: Final = frozenset({"producer.id.expiration.ms"})
DYNAMIC_CONFIGS: Final = frozenset(TOPIC_SYNONYMS) | BROKER_ONLY_DYNAMIC
Update = Callable[[dict[str, str]], dict[str, str]]  # an entity's configs -> its new ones


def entity_of(resource_name: str, node_id: int) -> str:
    """The stored entity of a BROKER resource name: ``<default>`` for the empty name, else this
    broker's id (Kafka's INVALID_REQUEST and messages for anything else)."""
    if resource_name == "":
        return DEFAULT_BROKER_ENTITY
    try:
        broker_id = int(resource_name)
    except ValueError:
        raise InvalidRequestError(
            f"Node id must be an integer, but it is: {resource_name}"
        ) from None
    if broker_id != node_id:
        raise InvalidRequestError(
            f"Unexpected broker id, expected {node_id}, but received {resource_name}"
        )
    return str(broker_id)


def check_keys_and_values(configs: Mapping[str, str | None]) -> None:
    """INVALID_REQUEST for keys that cannot change at runtime (all of them named, sorted), then
    for the first value its key cannot take."""
    static = sorted(k for k in configs if k not in DYNAMIC_CONFIGS)
    if static:
        raise InvalidRequestError(f"Cannot update these configs dynamically: [{', '.join(static)}]")
    for key, value in configs.items():
        if value is None:
            raise InvalidRequestError(f"Null value not supported for : {key}")
        if key in BROKER_ONLY_DYNAMIC:
            _check_at_least(key, value, MIN_VALUES[key])
            continue
        try:
            LogConfig.from_properties({TOPIC_SYNONYMS[key]: value})
        except InvalidConfigError as e:
            # LogConfig words it "Invalid value <v> for configuration <topic key>: <reason>"
            reason = _detail(e).partition(f" for configuration {TOPIC_SYNONYMS[key]}: ")[2]
            raise InvalidRequestError(
                f"Invalid value {value} for configuration {key}: {reason}"
            ) from None


def _check_at_least(key: str, value: str, least: int) -> None:
    """INVALID_REQUEST unless ``value`` is an integer of at least ``least``."""
    try:
        number = int(value)
    except ValueError:
        raise InvalidRequestError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None
    if number < least:
        raise InvalidRequestError(
            f"Invalid value {value} for configuration {key}: Value must be at least {least}"
        )


def _detail(e: Exception) -> str:
    """An error's own message, without the ``[Error N] NAME:`` prefix of ``str()``."""
    return Exception.__str__(e)


class DynamicBrokerConfigs:
    """Loads, checks and applies the dynamic levels of one broker's ``BrokerConfig``."""

    def __init__(
        self,
        config: BrokerConfig,
        coordinator: Coordinator,
        replica_manager: ReplicaManager,
        lock: asyncio.Lock,
    ) -> None:
        self.config = config
        self.coordinator = coordinator
        self.replica_manager = replica_manager
        self._lock = lock  # the topic registry's: topics change under the defaults they saw

    def load(self) -> None:
        """Read both levels from the coordinator (at start, before any partition opens)."""
        for entity in (DEFAULT_BROKER_ENTITY, str(self.config.node_id)):
            stored = self.coordinator.broker_configs(entity)
            usable = {}
            for key, value in stored.items():
                try:
                    check_keys_and_values({key: value})
                    usable[key] = value
                except (InvalidConfigError, InvalidRequestError) as e:
                    log.error("dynamic broker config %s of %s left out: %s", key, entity, e)
            try:
                self._check(entity, usable)
            except InvalidRequestError as e:
                log.error("dynamic broker configs of %s left out: %s", entity, e)
                continue
            self.config.set_dynamic(entity, usable)

    def _check(self, entity: str, configs: dict[str, str]) -> None:
        """INVALID_REQUEST if the topic defaults with ``configs`` at ``entity``, or some topic's
        config on top of them, would not validate."""
        cluster_wide, own = self.config.dynamic_default, self.config.dynamic_broker
        if entity == DEFAULT_BROKER_ENTITY:
            cluster_wide = configs
        else:
            own = configs
        defaults = self.config.topic_defaults_with(cluster_wide, own)
        try:
            default_config = LogConfig.from_properties(defaults)
            if tiered_storage_enabled(self.config):  # Kafka's validateBrokerLogConfigValues
                validate_local_retention(default_config)
        except InvalidConfigError as e:
            raise InvalidRequestError(
                f"Invalid dynamic broker configuration: {_detail(e)}"
            ) from None
        for name in self.coordinator.list_topics():
            meta = self.coordinator.get_topic(name)
            if meta is None:
                continue
            try:
                merged = LogConfig.from_properties({**defaults, **meta.configs})
                validate_no_remote_storage_for_compacted_topic(meta.configs, merged)
            except InvalidConfigError as e:
                raise InvalidRequestError(
                    f"Invalid dynamic broker configuration for topic '{name}': {_detail(e)}"
                ) from None

    async def alter(self, entity: str, update: Update, validate_only: bool) -> None:
        """Replace the dynamic configs of ``entity`` (``entity_of``) with ``update(current)``,
        read and written under the lock (two concurrent changes both count); every partition
        takes the new defaults before this returns. ``validate_only`` changes nothing."""
        async with self._lock:
            configs = update(dict(self.config.dynamic_layer(entity)))
            check_keys_and_values(configs)
            self._check(entity, configs)
            if validate_only:
                return
            await self.coordinator.set_broker_configs(entity, configs)
            self.config.set_dynamic(entity, configs)
            for name in self.coordinator.list_topics():
                meta = self.coordinator.get_topic(name)
                if meta is not None:
                    await self.replica_manager.reconfigure_topic(name, meta.configs)
        log.info("dynamic broker configs of %s are now %s", entity, configs)
