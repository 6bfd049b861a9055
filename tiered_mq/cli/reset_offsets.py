"""``tiered-mq groups reset-offsets``: move a consumer group's committed offsets, as
``kafka-consumer-groups.sh --reset-offsets`` does.

The partitions are every partition of each ``--topic T``, or those listed (``T:0,2``). The
new offset of each comes from exactly one scenario:

- ``--to-earliest`` / ``--to-latest``: the log start offset / the log end offset;
- ``--to-offset N``; ``--shift-by N`` (the committed offset + N; N may be negative; a
  partition without a committed offset is an error): both clamped to [log start offset,
  log end offset], with a note on stderr when clamped;
- ``--to-datetime`` (ISO 8601, e.g. ``2024-05-01T12:00:00.000``, local time unless it has an
  offset or ``Z``) / ``--by-duration`` (ISO 8601 ``PnDTnHnMnS``, back from now): the first
  offset whose record's timestamp is at or after that time, else the log end offset.

The plan (GROUP TOPIC PARTITION NEW-OFFSET) is printed; it is committed only with
``--execute`` (a dry run is the default). A group with active members (any state but EMPTY
or DEAD) is refused: its consumers would overwrite the offsets.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import click

from tiered_mq.cli._common import admin_client, admin_options, format_table, reports_errors
from tiered_mq.client.admin import Admin
from tiered_mq.topic_partition import TopicPartition

INACTIVE_STATES = ("EMPTY", "DEAD")
_DURATION = re.compile(
    r"P(?:(?P<days>\d+)D)?(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?",
    re.IGNORECASE,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_duration(text: str) -> timedelta:
    """ISO 8601 ``PnDTnHnMnS`` (as Java's ``Duration.parse``; each part optional)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groupdict().values()):
        raise click.BadParameter(f"expected PnDTnHnMnS, e.g. PT30M or P1DT2H, got {text!r}")
    parts = {k: float(v) for k, v in match.groupdict().items() if v is not None}
    return timedelta(**parts)


def parse_datetime_ms(text: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 date-time; local time without an offset."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"expected an ISO 8601 date-time, e.g. 2024-05-01T12:00:00.000, got {text!r}"
        ) from None
    return (moment.astimezone() - _EPOCH) // timedelta(milliseconds=1)


def partitions_to_reset(admin: Admin, topics: tuple[str, ...]) -> list[TopicPartition]:
    """``T`` (all its partitions) or ``T:0,1,...``; an unknown topic or partition is an error."""
    chosen: dict[TopicPartition, None] = {}
    for arg in topics:
        topic, sep, listed = arg.partition(":")
        existing = admin.partitions_for(topic)
        try:
            wanted = [int(p) for p in listed.split(",")] if sep else existing
        except ValueError:
            message = f"expected TOPIC[:P,...], got {arg!r}"
            raise click.BadParameter(message, param_hint="--topic") from None
        missing = sorted(set(wanted) - set(existing))
        if missing:
            raise click.ClickException(
                f"UNKNOWN_TOPIC_OR_PARTITION: {topic} has no partition {missing[0]}"
                f" (partitions: 0-{len(existing) - 1})"
            )
        chosen.update(dict.fromkeys(TopicPartition(topic, p) for p in wanted))
    return list(chosen)


def clamped(admin: Admin, requested: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
    """Each offset moved into [log start offset, log end offset], with a note when moved."""
    starts = admin.list_offsets(list(requested), "earliest")
    ends = admin.list_offsets(list(requested), "latest")
    result = {}
    for tp, offset in requested.items():
        result[tp] = min(max(offset, starts[tp]), ends[tp])
        if result[tp] != offset:
            bound = "log end" if offset > ends[tp] else "log start"
            click.echo(
                f"Note: {tp}: offset {offset} is outside the log; using the {bound}"
                f" offset {result[tp]}",
                err=True,
            )
    return result


def at_time(
    admin: Admin, tps: list[TopicPartition], timestamp_ms: int
) -> dict[TopicPartition, int]:
    """The first offset at or after ``timestamp_ms``; the log end offset when there is none."""
    found = admin.list_offsets(tps, timestamp_ms)
    ends = admin.list_offsets([tp for tp, o in found.items() if o < 0], "latest")
    return {tp: ends.get(tp, offset) for tp, offset in found.items()}


def shifted(
    committed: dict[TopicPartition, int], tps: list[TopicPartition], by: int
) -> dict[TopicPartition, int]:
    without = [str(tp) for tp in tps if tp not in committed]
    if without:
        raise click.ClickException(
            f"cannot shift the offset of {', '.join(without)}: the group has no committed offset"
        )
    return {tp: committed[tp] + by for tp in tps}


@click.command("reset-offsets")
@click.argument("group")
@click.option(
    "--topic",
    "topics",
    multiple=True,
    required=True,
    metavar="TOPIC[:P,...]",
    help="Topic whose offsets to reset, all partitions or those listed (repeatable).",
)
@click.option("--to-earliest", is_flag=True, help="To the log start offset.")
@click.option("--to-latest", is_flag=True, help="To the log end offset.")
@click.option("--to-offset", type=click.IntRange(min=0), help="To this offset.")
@click.option("--shift-by", type=int, help="By N from the committed offset (N may be < 0).")
@click.option("--to-datetime", metavar="ISO-8601", help="To the first record at or after it.")
@click.option("--by-duration", metavar="PnDTnHnMnS", help="To the first record this long ago.")
@click.option(
    "--execute/--dry-run", default=False, help="Commit the new offsets (default: only print)."
)
@admin_options
@reports_errors
def command(
    group: str,
    topics: tuple[str, ...],
    to_earliest: bool,
    to_latest: bool,
    to_offset: int | None,
    shift_by: int | None,
    to_datetime: str | None,
    by_duration: str | None,
    execute: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Reset GROUP's offsets (dry run unless --execute).

    The group must be inactive (no members). Exactly one of --to-earliest, --to-latest,
    --to-offset, --shift-by, --to-datetime and --by-duration says where to.
    """
    scenarios = (to_earliest, to_latest, to_offset, shift_by, to_datetime, by_duration)
    if sum(s is not None and s is not False for s in scenarios) != 1:
        raise click.UsageError(
            "give exactly one of --to-earliest, --to-latest, --to-offset, --shift-by,"
            " --to-datetime, --by-duration"
        )
    timestamp_ms = None
    if to_datetime is not None:
        timestamp_ms = parse_datetime_ms(to_datetime)
    elif by_duration is not None:
        now = datetime.now(UTC) - _EPOCH
        timestamp_ms = (now - parse_duration(by_duration)) // timedelta(milliseconds=1)
    admin = admin_client(bootstrap, timeout, properties)
    desc = admin.describe_group(group)
    if desc.state not in INACTIVE_STATES:
        raise click.ClickException(
            f"assignments can only be reset if the group '{group}' is inactive, but the"
            f" current state is {desc.state} ({len(desc.members)} member(s))"
        )
    tps = partitions_to_reset(admin, topics)
    if to_earliest or to_latest:
        plan = admin.list_offsets(tps, "earliest" if to_earliest else "latest")
    elif timestamp_ms is not None:
        plan = at_time(admin, tps, timestamp_ms)
    elif to_offset is not None:
        plan = clamped(admin, dict.fromkeys(tps, to_offset))
    else:
        committed = {
            TopicPartition(p.topic, p.partition): p.committed_offset
            for p in desc.offsets
            if p.committed_offset is not None
        }
        plan = clamped(admin, shifted(committed, tps, shift_by or 0))
    rows = [(group, tp.topic, tp.partition, offset) for tp, offset in sorted(plan.items())]
    click.echo(format_table(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], rows))
    if execute:
        admin.alter_group_offsets(group, plan)
    else:
        click.echo("Dry run: nothing changed; add --execute to commit these offsets.", err=True)
