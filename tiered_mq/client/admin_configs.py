"""Config operations of ``Admin``: topic configs, as ``ConfigValue``s by name, each with its
source as DescribeConfigs names it (DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG, ...).

``alter_topic_config`` uses IncrementalAlterConfigs; a broker that does not support it gets the
classic AlterConfigs with the full set of dynamic configs recomputed from DescribeConfigs
(correct as long as nobody else alters the same topic in between).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiered_mq.client.admin_base import UNSUPPORTED, AdminBase, ck_admin, enum_name
from tiered_mq.client.errors import ClientError


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str | None
    source: str
    is_default: bool
    read_only: bool = False
    sensitive: bool = False


def config_source(value: Any) -> str:
    """librdkafka reports a config's source as an int; name it as Kafka does."""
    try:
        return str(ck_admin.ConfigSource(value).name)
    except ValueError:
        return enum_name(value)


class ConfigAdmin(AdminBase):
    def describe_topic_configs(self, name: str) -> dict[str, ConfigValue]:
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
