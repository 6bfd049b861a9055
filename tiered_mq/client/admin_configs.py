"""Config operations of ``Admin``: topic configs and broker configs (Kafka's dynamic broker
configs, KIP-226), as ``ConfigValue``s by name. A source is named as DescribeConfigs names it:
DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG,
DEFAULT_CONFIG.

Topic configs go through librdkafka. ``alter_topic_config`` uses IncrementalAlterConfigs; a
broker that does not support it gets the classic AlterConfigs with the full set of dynamic
configs recomputed from DescribeConfigs (correct as long as nobody else alters the same topic in
between).

Broker configs go through a ``BrokerConnection`` (connection.py): librdkafka cannot name the
cluster-wide default, and it keeps one synonym per name. ``broker`` is a broker id
(``kafka-configs.sh --entity-name N``; the request goes to that broker, as Kafka's AdminClient
sends it) or None, the cluster-wide default (``--entity-default``: the BROKER resource with an
empty name, sent to a bootstrap broker). Described with synonyms, a broker id lists every broker
config resolved from its own level down, each with its synonyms most specific first (the level
values the broker would fall back to); the default lists only the configs set there.
``alter_broker_configs`` is IncrementalAlterConfigs SET/DELETE on one level; DELETE brings back
the level below. There is no AlterConfigs fallback for brokers (Kafka before 2.3 answers
UNSUPPORTED_VERSION): it would have to resend every dynamic config, the sensitive ones too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from tiered_mq.client.admin_base import UNSUPPORTED, AdminBase, ck_admin
from tiered_mq.client.connection import BrokerConnection, ConnectionSettings, open_connection
from tiered_mq.client.errors import ClientError
from tiered_mq.protocol.api_versions import ApiKey

TOPIC: Final = 2  # DescribeConfigs / IncrementalAlterConfigs resource types
BROKER: Final = 4
SET, DELETE = 0, 1  # IncrementalAlterConfigs config_operation


@dataclass(frozen=True)
class ConfigSynonym:
    """One level a config's value can come from: its name there (``log.retention.hours`` for
    ``retention.ms``), its value and the level's source."""

    name: str
    value: str | None
    source: str


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str | None
    source: str
    is_default: bool
    read_only: bool = False
    sensitive: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()  # when asked for (broker configs: always)


SOURCES: Final = {
    0: "UNKNOWN_CONFIG",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}
"""DescribeConfigs' config sources (v1+), by the names librdkafka's ``ConfigSource`` uses."""


def config_source(value: Any) -> str:
    """A config's source (an int or librdkafka's enum) by name; UNKNOWN_CONFIG for a
    number Kafka does not define (-1 included)."""
    return SOURCES.get(int(getattr(value, "value", value)), "UNKNOWN_CONFIG")


def config_value(entry: Mapping[str, Any]) -> ConfigValue:
    """A DescribeConfigs (v1+) ``configs`` entry as a ``ConfigValue``."""
    source = config_source(entry["config_source"])
    return ConfigValue(
        name=entry["name"],
        value=entry["value"],
        source=source,
        is_default=source == "DEFAULT_CONFIG",
        read_only=bool(entry["read_only"]),
        sensitive=bool(entry["is_sensitive"]),
        synonyms=tuple(
            ConfigSynonym(s["name"], s["value"], config_source(s["source"]))
            for s in entry["synonyms"]
        ),
    )


def configs_by_name(result: Mapping[str, Any]) -> dict[str, ConfigValue]:
    """A DescribeConfigs (v1+) resource result's configs as ``ConfigValue``s, by name, sorted."""
    configs = sorted(map(config_value, result["configs"]), key=lambda c: c.name)
    return {c.name: c for c in configs}


def broker_label(broker: int | None) -> str:
    """How messages name a BROKER resource: ``broker 0`` or ``the broker default``."""
    return "the broker default" if broker is None else f"broker {broker}"


class ConfigAdmin(AdminBase):
    # -- topics ------------------------------------------------------------------------
    def describe_topic_configs(self, name: str, synonyms: bool = False) -> dict[str, ConfigValue]:
        """Topic ``name``'s configs; with ``synonyms``, each with the levels it falls back to,
        most specific first (``retention.ms``, then ``log.retention.ms``, ...,
        ``log.retention.hours``), asked over a ``BrokerConnection`` as broker configs are:
        librdkafka keeps one synonym per name, and a broker config name repeats across levels."""
        if synonyms:
            return self._topic_configs_with_synonyms(name)
        resource = ck_admin.ConfigResource(ck_admin.ResourceType.TOPIC, name)
        futures = self._admin.describe_configs([resource], request_timeout=self._timeout)
        entries = self._result(futures[resource], f"describe configs of {name}")
        return {
            key: ConfigValue(
                name=key,
                value=e.value,
                source=config_source(e.source),
                is_default=bool(e.is_default),
                read_only=bool(e.is_read_only),
                sensitive=bool(e.is_sensitive),
            )
            for key, e in sorted(entries.items())
        }

    def _topic_configs_with_synonyms(self, name: str) -> dict[str, ConfigValue]:
        result = self._config_resource(
            None,
            {"resource_type": TOPIC, "resource_name": name, "configuration_keys": None},
            ApiKey.DESCRIBE_CONFIGS,
            f"describe configs of {name}",
            include_synonyms=True,
        )
        return configs_by_name(result)

    def alter_topic_config(
        self, name: str, set_configs: Mapping[str, str], delete: Sequence[str] = ()
    ) -> None:
        """Sets and deletes (reverts to default) topic configs, leaving the others alone."""
        op = ck_admin.AlterConfigOpType
        entries = [
            ck_admin.ConfigEntry(k, v, incremental_operation=op.SET) for k, v in set_configs.items()
        ] + [ck_admin.ConfigEntry(k, None, incremental_operation=op.DELETE) for k in delete]
        resource = ck_admin.ConfigResource(
            ck_admin.ResourceType.TOPIC, name, incremental_configs=entries
        )
        futures = self._admin.incremental_alter_configs([resource], request_timeout=self._timeout)
        try:
            self._result(futures[resource], f"alter configs of {name}")
        except ClientError as err:
            if err.name not in UNSUPPORTED:
                raise
            self._alter_topic_config_classic(name, set_configs, delete)

    def _alter_topic_config_classic(
        self, name: str, set_configs: Mapping[str, str], delete: Sequence[str]
    ) -> None:
        current = {
            k: c.value
            for k, c in self.describe_topic_configs(name).items()
            if c.source == "DYNAMIC_TOPIC_CONFIG" and c.value is not None
        }
        for key in delete:
            current.pop(key, None)
        current.update(set_configs)
        resource = ck_admin.ConfigResource(ck_admin.ResourceType.TOPIC, name, set_config=current)
        futures = self._admin.alter_configs([resource], request_timeout=self._timeout)
        self._result(futures[resource], f"alter configs of {name}")

    # -- brokers -----------------------------------------------------------------------
    def _broker_connection(self, broker: int | None) -> BrokerConnection:
        settings = ConnectionSettings.from_librdkafka(self.config.to_librdkafka())
        return open_connection(settings, self._timeout, broker)

    def _config_resource(
        self,
        broker: int | None,
        resource: dict[str, Any],
        api_key: ApiKey,
        context: str,
        **request_fields: Any,
    ) -> dict[str, Any]:
        """A DescribeConfigs or IncrementalAlterConfigs request of the one ``resource``, with
        ``request_fields``, sent to ``broker`` (None: a bootstrap broker); the resource's
        result, or its error as ClientError naming ``context``."""
        body: dict[str, Any] = {"resources": [resource], **request_fields}
        with self._broker_connection(broker) as conn:
            answer = conn.request(api_key, body)
        result: dict[str, Any] = answer["results" if "results" in answer else "responses"][0]
        if result["error_code"]:
            raise ClientError.from_code(result["error_code"], result["error_message"], context)
        return result

    def _broker_resource(
        self,
        broker: int | None,
        api_key: ApiKey,
        what: str,
        resource_fields: dict[str, Any],
        **request_fields: Any,
    ) -> dict[str, Any]:
        """``_config_resource`` of one BROKER resource (``""`` for the cluster-wide default)
        with ``resource_fields``, sent to ``broker``; an error names ``what`` and the broker."""
        name = "" if broker is None else str(broker)
        resource = {"resource_type": BROKER, "resource_name": name, **resource_fields}
        context = f"{what} of {broker_label(broker)}"
        return self._config_resource(broker, resource, api_key, context, **request_fields)

    def describe_broker_configs(self, broker: int | None = None) -> dict[str, ConfigValue]:
        """Broker ``broker``'s configs, or (None) those set as the cluster-wide default."""
        result = self._broker_resource(
            broker,
            ApiKey.DESCRIBE_CONFIGS,
            "describe configs",
            {"configuration_keys": None},
            include_synonyms=True,
        )
        return configs_by_name(result)

    def alter_broker_configs(
        self,
        broker: int | None,
        set_configs: Mapping[str, str],
        delete: Sequence[str] = (),
        validate_only: bool = False,
    ) -> None:
        """Sets and deletes dynamic configs of broker ``broker`` or (None) of the cluster-wide
        default, leaving the others alone; ``validate_only`` checks without changing."""
        configs = [
            {"name": k, "config_operation": SET, "value": v} for k, v in set_configs.items()
        ] + [{"name": k, "config_operation": DELETE, "value": None} for k in delete]
        self._broker_resource(
            broker,
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            "alter configs",
            {"configs": configs},
            validate_only=validate_only,
        )
