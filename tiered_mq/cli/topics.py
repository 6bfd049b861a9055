"""``tiered-mq topics``: create, list, describe, delete, alter, alter-config.

``describe`` prints, for each topic named (every topic without a name: one deleted meanwhile is
skipped with a note), the partitions (leader, replicas, ISR, earliest = log start offset, latest =
log end offset, offsets = latest - earliest: not a record count, ``render_description``) and the
topic configs that are not defaults (``--all-configs`` for every one; a partition without a
leader, offline, shows leader ``none`` and ``-`` for its offsets, as kafka-topics.sh shows
``Leader: none``); ``alter-config`` sets and reverts topic configs (both are also ``configs
describe|alter --topic NAME``, configs.py). On a TLS or SASL listener, pass the client settings
with ``-X`` (``security.protocol``, ``sasl.*``, ``ssl.*``).

``create`` leaves a partition count or replication factor not given to the broker
(``num.partitions``, ``default.replication.factor``), as kafka-topics.sh does since Kafka 2.4.
``alter NAME --partitions N`` adds partitions up to N (CreatePartitions; Kafka refuses N not
above the current count: INVALID_PARTITIONS), as ``kafka-topics.sh --alter --partitions``.
As kafka-topics.sh's ``--if-not-exists`` and ``--if-exists``, ``create --if-not-exists`` of a
topic that exists and ``describe``/``delete``/``alter``/``alter-config --if-exists`` of one that
does not do nothing and exit 0 (a note on stderr says so); without ``--if-exists``,
``describe``, ``delete`` and ``alter`` of a topic that does not exist fail (exit status 1) with
kafka-topics.sh's words, ``Error: UNKNOWN_TOPIC_OR_PARTITION: Topic 'NAME' does not exist as
expected``; ``alter-config`` shows the broker's answer ("The topic 'NAME' does not exist.",
Kafka's IncrementalAlterConfigs words).
``list`` and ``describe`` without a name show the internal topics (``__consumer_offsets``,
``__transaction_state``) as kafka-topics.sh does; ``--exclude-internal`` leaves them out, named
ones too (``describe __consumer_offsets orders --exclude-internal`` describes ``orders``, as
kafka-topics.sh filters its ``--topic`` matches): when that leaves no topic, the command fails as
for a topic that does not exist (``UNKNOWN_TOPIC_OR_PARTITION``; with ``--if-exists``, a note).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from tiered_mq.cli._common import (
    admin_client,
    admin_options,
    format_table,
    name_argument,
    parse_kv,
    reports_errors,
)
from tiered_mq.cli.configs import alter_topic, parse_changes, render_configs
from tiered_mq.client.admin import INTERNAL_TOPICS, Admin, TopicDescription
from tiered_mq.client.errors import ClientError

UNKNOWN = "UNKNOWN_TOPIC_OR_PARTITION"

if_exists_option = click.option(
    "--if-exists", is_flag=True, help="Do nothing (exit 0) if the topic does not exist."
)


@contextlib.contextmanager
def _unless(condition: bool, error: str, note: str) -> Iterator[None]:
    """With ``condition``, Kafka error ``error`` from the block becomes ``note`` on stderr and
    the command goes on (to its end: exit status 0)."""
    try:
        yield
    except ClientError as err:
        if not condition or err.name != error:
            raise
        click.echo(note, err=True)


@contextlib.contextmanager
def _existing(name: str, if_exists: bool) -> Iterator[None]:
    """The block acts on topic ``name``, which must exist: its UNKNOWN_TOPIC_OR_PARTITION is
    ``Error: UNKNOWN_TOPIC_OR_PARTITION: Topic 'NAME' does not exist as expected`` (exit status
    1), kafka-topics.sh's words for ``--describe``/``--delete``/``--alter`` of a topic that
    does not exist; with ``if_exists``, a note on stderr and exit status 0."""
    with _unless(if_exists, UNKNOWN, f"Topic {name} does not exist."):
        try:
            yield
        except ClientError as err:
            if err.name != UNKNOWN or if_exists:
                raise
            raise ClientError(
                UNKNOWN, f"Topic '{name}' does not exist as expected", err.code
            ) from err


@click.group("topics")
def command() -> None:
    """Create, list, describe, delete and configure topics."""


BROKER_DEFAULT = -1
"""CreateTopics' "the broker's default" for a partition count or replication factor (KIP-464):
``num.partitions``, ``default.replication.factor``."""


@command.command("create")
@name_argument("name", "topic")
@click.option(
    "-p",
    "--partitions",
    default=None,
    show_default="the broker's num.partitions",
    type=click.IntRange(min=1),
)
@click.option(
    "-r",
    "--replication-factor",
    default=None,
    show_default="the broker's default.replication.factor",
    type=click.IntRange(min=1),
)
@click.option("-c", "--config", "configs", multiple=True, metavar="KEY=VALUE", help="Topic config.")
@click.option(
    "--if-not-exists", is_flag=True, help="Do nothing (exit 0) if the topic already exists."
)
@admin_options
@reports_errors
def create(
    name: str,
    partitions: int | None,
    replication_factor: int | None,
    configs: tuple[str, ...],
    if_not_exists: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Create topic NAME (as kafka-topics.sh, the broker's defaults for what is not given)."""
    config = parse_kv(configs, "--config")
    admin = admin_client(bootstrap, timeout, properties)
    with _unless(if_not_exists, "TOPIC_ALREADY_EXISTS", f"Topic {name} already exists."):
        admin.create_topic(
            name, partitions or BROKER_DEFAULT, replication_factor or BROKER_DEFAULT, config
        )
        click.echo(created_line(admin, name, partitions, replication_factor))


def created_line(admin: Admin, name: str, partitions: int | None, rf: int | None) -> str:
    """``Created topic NAME (N partitions, replication factor R).``; a count left to the broker
    (None) is read back from the metadata, unless the topic is not in it yet (a cluster whose
    brokers have not all heard of it): then the line says the broker's defaults were used."""
    if partitions is None or rf is None:
        try:
            desc = admin.describe_topic(name, with_configs=False)
        except ClientError:
            return f"Created topic {name} (the broker's default partitions and replication factor)."
        partitions = len(desc.partitions)
        rf = len(desc.partitions[0].replicas) if desc.partitions else 0
    noun = "partition" if partitions == 1 else "partitions"
    return f"Created topic {name} ({partitions} {noun}, replication factor {rf})."


exclude_internal_option = click.option(
    "--exclude-internal",
    is_flag=True,
    help="Leave out the internal topics (__consumer_offsets, __transaction_state).",
)
internal_option = click.option("--internal", is_flag=True, hidden=True)
"""The former opt-in to internal topics, shown by default now (as kafka-topics.sh): accepted so
that scripts which pass it keep working; it changes nothing."""


@command.command("list")
@exclude_internal_option
@internal_option
@admin_options
@reports_errors
def list_(
    exclude_internal: bool,
    internal: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """List topic names, one a line, the internal topics included (as kafka-topics.sh --list;
    --exclude-internal leaves them out)."""
    admin = admin_client(bootstrap, timeout, properties)
    for name in admin.list_topics(include_internal=not exclude_internal):
        click.echo(name)


def render_description(desc: TopicDescription, all_configs: bool) -> str:
    """``describe``'s text of one topic. OFFSETS is the number of offsets in the log (latest -
    earliest), not a count of records: on a compacted topic the records compacted away, and on
    a transactional one the commit and abort markers (and aborted records), still take offsets.
    Counting records would mean reading the whole log; Kafka's tools show no count either
    (kafka-get-offsets.sh prints the offsets)."""
    rf = len(desc.partitions[0].replicas) if desc.partitions else 0
    out = [f"Topic: {desc.name}  Partitions: {len(desc.partitions)}  ReplicationFactor: {rf}"]
    out.append(
        format_table(
            ["PARTITION", "LEADER", "REPLICAS", "ISR", "EARLIEST", "LATEST", "OFFSETS"],
            [
                (
                    p.partition,
                    p.leader,
                    p.replicas,
                    p.isr,
                    p.earliest_offset,
                    p.latest_offset,
                    max(0, p.latest_offset - p.earliest_offset),
                )
                if p.leader >= 0
                else (p.partition, "none", p.replicas, p.isr, None, None, None)
                for p in desc.partitions
            ],
        )
    )
    out.append("")
    out += render_configs(desc.configs.values(), all_configs)
    return "\n".join(out)


@command.command("describe")
@name_argument("names", "topic", many=True)
@click.option("--all-configs", is_flag=True, help="Show default configs too.")
@exclude_internal_option
@internal_option
@if_exists_option
@admin_options
@reports_errors
def describe(
    names: tuple[str, ...],
    all_configs: bool,
    exclude_internal: bool,
    internal: bool,
    if_exists: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Partitions, leaders, offsets and configs of topics NAME (none: every topic), the internal
    ones left out with --exclude-internal, named or not (as kafka-topics.sh --describe)."""
    admin = admin_client(bootstrap, timeout, properties)
    excluded = [n for n in names if exclude_internal and n in INTERNAL_TOPICS]
    chosen = [n for n in names if n not in excluded]
    if not names:
        chosen = admin.list_topics(include_internal=not exclude_internal)
    elif not chosen:  # kafka-topics.sh: "Topic '...' does not exist as expected"
        with _unless(if_exists, UNKNOWN, f"Topic {excluded[0]} does not exist."):
            left_out = ", ".join(excluded)
            raise ClientError(UNKNOWN, f"{left_out}: internal, left out by --exclude-internal", 3)
    for i, name in enumerate(chosen):
        with _existing(name, if_exists or not names):  # not named: deleted meanwhile, a note
            desc = admin.describe_topic(name)
            click.echo(("\n" if i else "") + render_description(desc, all_configs))


@command.command("delete")
@name_argument("name", "topic")
@if_exists_option
@admin_options
@reports_errors
def delete(
    name: str, if_exists: bool, bootstrap: str, properties: tuple[str, ...], timeout: float
) -> None:
    """Delete topic NAME (and, on tiered-mq, its objects in the bucket)."""
    with _existing(name, if_exists):
        admin_client(bootstrap, timeout, properties).delete_topic(name)
        click.echo(f"Deleted topic {name}.")


@command.command("alter")
@name_argument("name", "topic")
@click.option(
    "-p",
    "--partitions",
    required=True,
    type=click.IntRange(min=1),
    help="The new partition count (only more partitions: Kafka cannot remove any).",
)
@if_exists_option
@admin_options
@reports_errors
def alter(
    name: str,
    partitions: int,
    if_exists: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Add partitions to topic NAME (kafka-topics.sh --alter --partitions)."""
    with _existing(name, if_exists):
        admin_client(bootstrap, timeout, properties).create_partitions(name, partitions)
        click.echo(f"Topic {name} now has {partitions} partitions.")


@command.command("alter-config")
@name_argument("name", "topic")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Config to set.")
@click.option("--delete", "deletes", multiple=True, metavar="KEY", help="Config to revert.")
@if_exists_option
@admin_options
@reports_errors
def alter_config(
    name: str,
    sets: tuple[str, ...],
    deletes: tuple[str, ...],
    if_exists: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Set or revert configs of topic NAME, leaving the others as they are."""
    to_set = parse_changes(sets, deletes)
    admin = admin_client(bootstrap, timeout, properties)
    with _unless(if_exists, UNKNOWN, f"Topic {name} does not exist."):
        click.echo(alter_topic(admin, name, to_set, deletes))
