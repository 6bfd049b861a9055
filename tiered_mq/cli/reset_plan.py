"""The new offsets of ``groups reset-offsets``, scenario by scenario as
``kafka-consumer-groups.sh --reset-offsets`` computes them, and the reset plan's CSV.

Scenarios (``Scenario.kind``), each a map TopicPartition -> new offset:

- ``earliest`` / ``latest``: the log start offset / the log end offset;
- ``current``: the committed offset as it is; the log end offset for a partition without one;
- ``offset`` N and ``shift`` N (the committed offset + N; a partition without a committed offset
  is an error), like ``--from-file``'s offsets: clamped to [log start offset, log end offset],
  with a note on stderr when clamped;
- ``time`` T (ms since the epoch): the first offset whose record's timestamp is at or after T,
  else the log end offset.

The CSV is Kafka's, without a header: ``topic,partition,offset`` rows for the one group of the
command, ``group,topic,partition,offset`` rows when it names several (``--all-groups``).
``--export`` writes it, ``--from-file`` reads it; Python's csv module quotes and unquotes a group
id with a comma as Kafka's CSV writer does.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import click

from tiered_mq.client.admin import Admin
from tiered_mq.topic_partition import TopicPartition

Plan = dict[TopicPartition, int]
_DURATION = re.compile(
    r"P(?:(?P<days>\d+)D)?(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?",
    re.IGNORECASE,
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_duration(text: str) -> timedelta:
    """ISO 8601 ``PnDTnHnMnS`` (as Java's ``Duration.parse``; each part optional)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groupdict().values()):
        raise click.BadParameter(
            f"expected PnDTnHnMnS, e.g. PT30M or P1DT2H, got {text!r}", param_hint="--by-duration"
        )
    parts = {k: float(v) for k, v in match.groupdict().items() if v is not None}
    return timedelta(**parts)


def parse_datetime_ms(text: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 date-time; local time without an offset."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"expected an ISO 8601 date-time, e.g. 2024-05-01T12:00:00.000, got {text!r}",
            param_hint="--to-datetime",
        ) from None
    return (moment.astimezone() - EPOCH) // timedelta(milliseconds=1)


def _check_exists(topic: str, wanted: Sequence[int], existing: Sequence[int]) -> None:
    missing = sorted(set(wanted) - set(existing))
    if missing:
        raise click.ClickException(
            f"UNKNOWN_TOPIC_OR_PARTITION: {topic} has no partition {missing[0]}"
            f" (partitions: 0-{len(existing) - 1})"
        )


def partitions_to_reset(admin: Admin, topics: Sequence[str]) -> list[TopicPartition]:
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
        _check_exists(topic, wanted, existing)
        chosen.update(dict.fromkeys(TopicPartition(topic, p) for p in wanted))
    return list(chosen)


def check_partitions(admin: Admin, partitions: Sequence[TopicPartition]) -> None:
    """UNKNOWN_TOPIC_OR_PARTITION for the first partition that does not exist."""
    for topic in dict.fromkeys(tp.topic for tp in partitions):
        wanted = [tp.partition for tp in partitions if tp.topic == topic]
        _check_exists(topic, wanted, admin.partitions_for(topic))


def clamped(admin: Admin, requested: Mapping[TopicPartition, int]) -> Plan:
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


def at_time(admin: Admin, tps: list[TopicPartition], timestamp_ms: int) -> Plan:
    """The first offset at or after ``timestamp_ms``; the log end offset when there is none."""
    found = admin.list_offsets(tps, timestamp_ms)
    ends = admin.list_offsets([tp for tp, o in found.items() if o < 0], "latest")
    return {tp: ends.get(tp, offset) for tp, offset in found.items()}


def shifted(committed: Mapping[TopicPartition, int], tps: list[TopicPartition], by: int) -> Plan:
    without = [str(tp) for tp in tps if tp not in committed]
    if without:
        raise click.ClickException(
            f"cannot shift the offset of {', '.join(without)}: the group has no committed offset"
        )
    return {tp: committed[tp] + by for tp in tps}


def current(
    admin: Admin, committed: Mapping[TopicPartition, int], tps: list[TopicPartition]
) -> Plan:
    """The committed offsets; the log end offset of a partition without one (Kafka's rule)."""
    ends = admin.list_offsets([tp for tp in tps if tp not in committed], "latest")
    return {tp: committed[tp] if tp in committed else ends[tp] for tp in tps}


@dataclass(frozen=True)
class Scenario:
    """Where to: ``value`` is the offset (``offset``), the shift (``shift``) or the timestamp in
    ms (``time``); unused by the others."""

    kind: Literal["earliest", "latest", "current", "offset", "shift", "time"]
    value: int = 0

    def new_offsets(
        self, admin: Admin, tps: list[TopicPartition], committed: Mapping[TopicPartition, int]
    ) -> Plan:
        if self.kind == "earliest" or self.kind == "latest":
            return admin.list_offsets(tps, self.kind)
        if self.kind == "current":
            return current(admin, committed, tps)
        if self.kind == "offset":
            return clamped(admin, dict.fromkeys(tps, self.value))
        if self.kind == "shift":
            return clamped(admin, shifted(committed, tps, self.value))
        return at_time(admin, tps, self.value)


def read_plan(text: str, group: str | None, source: str) -> dict[str, Plan]:
    """Kafka's CSV plan by group: ``topic,partition,offset`` rows belong to ``group`` (the one
    group of the command; None: a usage error), ``group,topic,partition,offset`` rows name
    theirs. Blank lines are skipped; a malformed row is a usage error naming its line."""
    rows = [(n, row) for n, row in enumerate(csv.reader(io.StringIO(text)), 1) if "".join(row)]
    if not rows:
        raise click.BadParameter(f"{source} has no rows", param_hint="--from-file")
    width = len(rows[0][1])
    if width == 3 and group is None:
        raise click.BadParameter(
            f"{source} has topic,partition,offset rows, which name no group: give one GROUP,"
            " or rows of group,topic,partition,offset",
            param_hint="--from-file",
        )
    expected = "topic,partition,offset" if width == 3 else "group,topic,partition,offset"
    plans: dict[str, Plan] = {}
    for n, row in rows:
        cells = [cell.strip() for cell in row]
        try:
            if len(cells) != width or width not in (3, 4):
                raise ValueError
            owner = group if width == 3 else cells[0]
            topic, partition, offset = cells[-3], int(cells[-2]), int(cells[-1])
        except ValueError:
            raise click.BadParameter(
                f"{source} line {n}: expected {expected}, got {','.join(row)!r}",
                param_hint="--from-file",
            ) from None
        plans.setdefault(str(owner), {})[TopicPartition(topic, partition)] = offset
    return plans


def write_plan(plans: Mapping[str, Plan], with_group: bool) -> str:
    """The plans as Kafka's CSV (see ``read_plan``), a row per partition, sorted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for group, plan in plans.items():
        for (topic, partition), offset in sorted(plan.items()):
            writer.writerow([group, topic, partition, offset][0 if with_group else 1 :])
    return out.getvalue()
