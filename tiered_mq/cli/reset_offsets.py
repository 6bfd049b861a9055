"""``tiered-mq groups reset-offsets``: move consumer groups' committed offsets, as
``kafka-consumer-groups.sh --reset-offsets`` does.

Groups: the GROUP arguments, or ``--all-groups`` (every group the broker lists). Partitions
(the scope): every partition of each ``--topic T``, or those listed (``T:0,2``), the same for
every group (a group that never read T gets offsets for it, as with Kafka); or ``--all-topics``,
every partition a group has committed offsets for. The new offset of each comes from exactly one
scenario (reset_plan.py): ``--to-earliest``, ``--to-latest``, ``--to-current``, ``--to-offset
N``, ``--shift-by N``, ``--to-datetime`` (ISO 8601, e.g. ``2024-05-01T12:00:00.000``, local time
unless it has an offset or ``Z``), ``--by-duration`` (ISO 8601 ``PnDTnHnMnS``, back from now), or
``--from-file`` (Kafka's CSV, which names the partitions itself: no ``--topic`` or
``--all-topics`` with it; its offsets are clamped to the log like ``--to-offset``'s).

The plan (GROUP TOPIC PARTITION NEW-OFFSET; with ``--export`` Kafka's CSV instead, which
``--from-file`` reads back) is printed; it is committed only with ``--execute`` (a dry run is the
default). A group with active members (any state but EMPTY or DEAD) is refused, as is a group
the file has no rows for: an error line each on stderr, the other groups go on, and the exit
status is then 1 (Kafka prints the same errors but exits 0). Every plan is computed before
anything is committed; a failure while committing stops there (the groups before it keep their
new offsets).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from tiered_mq.cli._common import (
    admin_client,
    admin_options,
    all_groups_option,
    check_groups,
    format_table,
    group_ids,
    name_argument,
    reports_errors,
)
from tiered_mq.cli.reset_plan import (
    EPOCH,
    Plan,
    Scenario,
    check_partitions,
    clamped,
    parse_datetime_ms,
    parse_duration,
    partitions_to_reset,
    read_plan,
    write_plan,
)
from tiered_mq.client.admin import Admin
from tiered_mq.topic_partition import TopicPartition

INACTIVE_STATES = ("EMPTY", "DEAD")
SCENARIOS = (
    "--to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime,"
    " --by-duration, --from-file"
)


def chosen_scenario(
    to_earliest: bool,
    to_latest: bool,
    to_current: bool,
    to_offset: int | None,
    shift_by: int | None,
    to_datetime: str | None,
    by_duration: str | None,
    from_file: Path | None,
) -> Scenario | None:
    """The one scenario asked for (None: ``--from-file``); a usage error unless exactly one."""
    given = (to_earliest, to_latest, to_current, to_offset, shift_by, to_datetime, by_duration)
    if sum(v is not None and v is not False for v in (*given, from_file)) != 1:
        raise click.UsageError(f"give exactly one of {SCENARIOS}")
    if to_earliest:
        return Scenario("earliest")
    if to_latest:
        return Scenario("latest")
    if to_current:
        return Scenario("current")
    if to_offset is not None:
        return Scenario("offset", to_offset)
    if shift_by is not None:
        return Scenario("shift", shift_by)
    if to_datetime is not None:
        return Scenario("time", parse_datetime_ms(to_datetime))
    if by_duration is not None:
        now = datetime.now(UTC) - EPOCH
        return Scenario("time", (now - parse_duration(by_duration)) // timedelta(milliseconds=1))
    return None


def check_scope(topics: tuple[str, ...], all_topics: bool, from_file: Path | None) -> None:
    if from_file is not None:
        if topics or all_topics:
            raise click.UsageError("--from-file names its partitions: drop --topic/--all-topics")
    elif bool(topics) == all_topics:
        raise click.UsageError("give --topic TOPIC[:P,...] (repeatable) or --all-topics")


def plan_group(
    admin: Admin,
    group: str,
    scenario: Scenario | None,
    fixed: list[TopicPartition] | None,
    file_plans: dict[str, Plan] | None,
    source: str,
) -> Plan | str:
    """``group``'s new offsets, or why it is refused."""
    desc = admin.describe_group(group)
    if desc.state not in INACTIVE_STATES:
        return (
            f"assignments can only be reset if the group '{group}' is inactive, but the"
            f" current state is {desc.state} ({len(desc.members)} member(s))"
        )
    committed = {
        TopicPartition(p.topic, p.partition): p.committed_offset
        for p in desc.offsets
        if p.committed_offset is not None
    }
    if scenario is None:
        assert file_plans is not None
        if group not in file_plans:
            return f"no reset plan for group '{group}' in {source}"
        check_partitions(admin, list(file_plans[group]))
        return clamped(admin, file_plans[group])
    tps = fixed if fixed is not None else sorted(committed)
    return scenario.new_offsets(admin, tps, committed)


def render_plans(plans: dict[str, Plan], export: bool, with_group: bool) -> str:
    """The GROUP TOPIC PARTITION NEW-OFFSET table, or with ``export`` Kafka's CSV."""
    if export:
        return write_plan(plans, with_group)
    rows = [(g, tp.topic, tp.partition, o) for g, p in plans.items() for tp, o in sorted(p.items())]
    return format_table(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], rows) + "\n"


@click.command("reset-offsets")
@name_argument("groups", "group", many=True)
@all_groups_option
@click.option(
    "--topic",
    "topics",
    multiple=True,
    metavar="TOPIC[:P,...]",
    help="Topic whose offsets to reset, all partitions or those listed (repeatable).",
)
@click.option("--all-topics", is_flag=True, help="Every partition with a committed offset.")
@click.option("--to-earliest", is_flag=True, help="To the log start offset.")
@click.option("--to-latest", is_flag=True, help="To the log end offset.")
@click.option("--to-current", is_flag=True, help="To the committed offset (else the log end).")
@click.option("--to-offset", type=click.IntRange(min=0), help="To this offset.")
@click.option("--shift-by", type=int, help="By N from the committed offset (N may be < 0).")
@click.option("--to-datetime", metavar="ISO-8601", help="To the first record at or after it.")
@click.option("--by-duration", metavar="PnDTnHnMnS", help="To the first record this long ago.")
@click.option(
    "--from-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="To the offsets of a CSV plan: topic,partition,offset (or group,topic,partition,offset).",
)
@click.option(
    "--execute/--dry-run", default=False, help="Commit the new offsets (default: only print)."
)
@click.option("--export", is_flag=True, help="Print the plan as CSV, as --from-file reads it.")
@admin_options
@reports_errors
def command(
    groups: tuple[str, ...],
    all_groups: bool,
    topics: tuple[str, ...],
    all_topics: bool,
    to_earliest: bool,
    to_latest: bool,
    to_current: bool,
    to_offset: int | None,
    shift_by: int | None,
    to_datetime: str | None,
    by_duration: str | None,
    from_file: Path | None,
    execute: bool,
    export: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Reset the offsets of GROUP(s) or --all-groups (dry run unless --execute).

    A group must be inactive (no members). --topic or --all-topics says which partitions,
    and exactly one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by,
    --to-datetime, --by-duration and --from-file where to.
    """
    scenario = chosen_scenario(
        to_earliest, to_latest, to_current, to_offset, shift_by, to_datetime, by_duration, from_file
    )
    check_scope(topics, all_topics, from_file)
    check_groups(groups, all_groups)
    one_group = groups[0] if len(groups) == 1 else None
    source = str(from_file)
    file_plans = read_plan(from_file.read_text(), one_group, source) if from_file else None
    admin = admin_client(bootstrap, timeout, properties)
    fixed = partitions_to_reset(admin, topics) if topics else None
    plans: dict[str, Plan] = {}
    refused = 0
    for group in group_ids(admin, groups):
        planned = plan_group(admin, group, scenario, fixed, file_plans, source)
        if isinstance(planned, str):
            click.echo(f"Error: {planned}", err=True)
            refused += 1
            continue
        if not planned:
            click.echo(
                f"Note: group '{group}' has no committed offsets: nothing to reset", err=True
            )
        plans[group] = planned
    if any(plans.values()):
        click.echo(render_plans(plans, export, with_group=one_group is None), nl=False)
        if execute:
            for group, plan in plans.items():
                if plan:
                    admin.alter_group_offsets(group, plan)
        else:
            click.echo("Dry run: nothing changed; add --execute to commit these offsets.", err=True)
    elif not refused and not plans:
        click.echo("No consumer groups.", err=True)
    if refused:
        raise click.exceptions.Exit(1)
