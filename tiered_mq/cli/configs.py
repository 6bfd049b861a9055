"""``tiered-mq configs``: describe and alter the configs of a broker, of the cluster-wide broker
default, or of a topic, as ``kafka-configs.sh --entity-type brokers|topics`` does.

The entity is one of ``--broker N`` (``--entity-name N``), ``--broker-default``
(``--entity-default``: the BROKER resource with an empty name, every broker's fallback) or
``--topic T`` (the same as ``topics describe`` / ``topics alter-config``).

``describe`` prints NAME VALUE SOURCE for every config that is not at Kafka's default
(``--all-configs`` for every one); the source is DescribeConfigs': DYNAMIC_BROKER_CONFIG (set on
this broker at runtime), DYNAMIC_DEFAULT_BROKER_CONFIG (set as the cluster-wide default),
STATIC_BROKER_CONFIG (the broker's ``--config``), DEFAULT_CONFIG, and for topics
DYNAMIC_TOPIC_CONFIG. ``--synonyms`` adds the levels a value falls back to, most specific first,
as kafka-configs.sh prints them (``SOURCE:name=value, ...``; a topic's go on to the broker
configs it defaults to: ``DYNAMIC_TOPIC_CONFIG:retention.ms=-1,
DEFAULT_CONFIG:log.retention.hours=168``). A sensitive
value shows as ``*****``. kafka-configs.sh shows only the configs set at the entity's own level
unless ``--all``; the SOURCE column tells those apart here.

``alter`` sets (``--set K=V``) and deletes (``--delete K``) configs, leaving the others alone
(IncrementalAlterConfigs). On a broker it changes dynamic configs only (KIP-226: the broker
defaults of topic configs); deleting one brings back the level below. As kafka-configs.sh does,
deleting a config that is not set at that level (a topic's: DYNAMIC_TOPIC_CONFIG) is an error
(INVALID_CONFIG), as is a topic config name the topic does not have. The broker's refusals come
as one line with exit status 1: INVALID_REQUEST for a key that cannot change at runtime or a bad
value, as Kafka answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import click

from tiered_mq.cli._common import (
    admin_client,
    admin_options,
    format_table,
    parse_kv,
    reports_errors,
)
from tiered_mq.client.admin import Admin, ConfigValue
from tiered_mq.client.admin_configs import broker_label

P = ParamSpec("P")
R = TypeVar("R")


def synonyms_cell(config: ConfigValue) -> str:
    """``SOURCE:name=value, ...`` as kafka-configs.sh prints synonyms (``-`` without any)."""
    listed = [f"{s.source}:{s.name}={s.value}" for s in config.synonyms]
    return ", ".join(listed) or "-"


def render_configs(
    configs: Iterable[ConfigValue], all_configs: bool, synonyms: bool = False
) -> list[str]:
    """A title line and the NAME VALUE SOURCE [SYNONYMS] table of the configs that are not
    defaults (every one with ``all_configs``)."""
    shown = [c for c in configs if all_configs or not c.is_default]
    if not shown:
        return ["Configs: all defaults (--all-configs to list them)"]
    headers = ["NAME", "VALUE", "SOURCE", *(["SYNONYMS"] if synonyms else [])]
    rows = [
        (
            c.name,
            "*****" if c.sensitive else c.value,
            c.source,
            *([synonyms_cell(c)] if synonyms else []),
        )
        for c in shown
    ]
    title = "Configs:" if all_configs else "Configs (not defaults):"
    return [title, format_table(headers, rows)]


def parse_changes(sets: Sequence[str], deletes: Sequence[str]) -> dict[str, str]:
    """``--set`` as a dict; usage errors for nothing to do or a key both set and deleted."""
    if not sets and not deletes:
        raise click.UsageError("nothing to do: give --set KEY=VALUE and/or --delete KEY")
    to_set = parse_kv(sets, "--set")
    overlap = sorted(set(to_set) & set(deletes))
    if overlap:
        raise click.UsageError(f"both set and deleted: {', '.join(overlap)}")
    return to_set


def changes_text(to_set: dict[str, str], deletes: Sequence[str]) -> str:
    return " ".join([f"{k}={v}" for k, v in to_set.items()] + [f"-{k}" for k in deletes])


def alter_topic(admin: Admin, name: str, to_set: dict[str, str], deletes: Sequence[str]) -> str:
    """Alters topic ``name``'s configs; the line that reports it. As kafka-configs.sh
    --delete-config, a name the topic does not have is a typo, and one not set on the topic
    (DYNAMIC_TOPIC_CONFIG) has nothing to delete: both INVALID_CONFIG, nothing altered."""
    if deletes:
        configs = admin.describe_topic_configs(name)
        unknown = sorted(set(deletes) - set(configs))
        if unknown:
            raise click.ClickException(
                f"INVALID_CONFIG: {name} has no config named {', '.join(unknown)}"
            )
        unset = sorted(d for d in set(deletes) if configs[d].source != "DYNAMIC_TOPIC_CONFIG")
        if unset:
            raise click.ClickException(
                f"INVALID_CONFIG: {name} does not set {', '.join(unset)}: nothing to delete"
                f" ({configs[unset[0]].source} gives its value)"
            )
    admin.alter_topic_config(name, to_set, list(deletes))
    return f"Altered configs of {name}: {changes_text(to_set, deletes)}"


def alter_broker(
    admin: Admin, broker: int | None, to_set: dict[str, str], deletes: Sequence[str]
) -> str:
    """Alters one level of dynamic broker configs; the line that reports it."""
    if deletes:
        configs = admin.describe_broker_configs(broker).values()
        own = "DYNAMIC_DEFAULT_BROKER_CONFIG" if broker is None else "DYNAMIC_BROKER_CONFIG"
        unknown = sorted(set(deletes) - {c.name for c in configs if c.source == own})
        if unknown:
            raise click.ClickException(
                f"INVALID_CONFIG: {broker_label(broker)} has no dynamic config named"
                f" {', '.join(unknown)}"
            )
    admin.alter_broker_configs(broker, to_set, list(deletes))
    return f"Altered configs of {broker_label(broker)}: {changes_text(to_set, deletes)}"


@dataclass(frozen=True)
class Entity:
    """A topic, or a broker (``broker`` None with ``topic`` None: the cluster-wide default)."""

    topic: str | None
    broker: int | None

    @property
    def heading(self) -> str:
        """The first line of ``describe``: ``Topic: T``, ``Broker: N``, or the default's."""
        if self.topic is not None:
            return f"Topic: {self.topic}"
        return "Broker: cluster-wide default" if self.broker is None else f"Broker: {self.broker}"


def entity_options(func: Callable[P, R]) -> Callable[P, R]:
    """``--broker``, ``--broker-default`` and ``--topic`` (exactly one: see ``chosen``)."""
    func = click.option("--topic", metavar="TOPIC", help="A topic's configs.")(func)
    func = click.option(
        "--broker-default",
        is_flag=True,
        help="The cluster-wide default of broker configs (kafka-configs.sh --entity-default).",
    )(func)
    return click.option("--broker", type=int, metavar="ID", help="One broker's configs.")(func)


def chosen(broker: int | None, broker_default: bool, topic: str | None) -> Entity:
    if sum((broker is not None, broker_default, topic is not None)) != 1:
        raise click.UsageError("give exactly one of --broker ID, --broker-default, --topic TOPIC")
    return Entity(topic, broker)


@click.group("configs")
def command() -> None:
    """Describe and alter broker and topic configs (kafka-configs.sh)."""


@command.command("describe")
@entity_options
@click.option("--all-configs", "--all", "all_configs", is_flag=True, help="Defaults too.")
@click.option("--synonyms", is_flag=True, help="Add the levels each config falls back to.")
@admin_options
@reports_errors
def describe(
    broker: int | None,
    broker_default: bool,
    topic: str | None,
    all_configs: bool,
    synonyms: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """The configs of a broker, of the broker default, or of a topic, with their sources."""
    entity = chosen(broker, broker_default, topic)
    admin = admin_client(bootstrap, timeout, properties)
    if entity.topic is not None:
        with_synonyms = {"synonyms": True} if synonyms else {}
        configs = admin.describe_topic_configs(entity.topic, **with_synonyms)
    else:
        configs = admin.describe_broker_configs(entity.broker)
    click.echo(entity.heading)
    if not configs and broker_default:
        click.echo("No configs set as the cluster-wide default.")
        return
    click.echo("\n".join(render_configs(configs.values(), all_configs, synonyms)))


@command.command("alter")
@entity_options
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Config to set.")
@click.option("--delete", "deletes", multiple=True, metavar="KEY", help="Config to delete.")
@admin_options
@reports_errors
def alter(
    broker: int | None,
    broker_default: bool,
    topic: str | None,
    sets: tuple[str, ...],
    deletes: tuple[str, ...],
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Set or delete configs of a broker, of the broker default, or of a topic."""
    entity = chosen(broker, broker_default, topic)
    to_set = parse_changes(sets, deletes)
    admin = admin_client(bootstrap, timeout, properties)
    if entity.topic is not None:
        click.echo(alter_topic(admin, entity.topic, to_set, deletes))
    else:
        click.echo(alter_broker(admin, entity.broker, to_set, deletes))
