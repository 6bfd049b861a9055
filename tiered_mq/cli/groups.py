"""``tiered-mq groups``: list consumer groups; describe them with their lag.

``list`` prints GROUP, TYPE and STATE, as kafka-consumer-groups.sh ``--list --type --state``
does; TYPE is the group's type as the broker's ListGroups (v5) names it, spelled as Kafka's
GroupType prints it (``Classic``; ``Unknown`` from a broker that does not say).

``describe`` prints, for each GROUP (or ``--all-groups``), a line with its state and
coordinator (``host:port (id)``, as kafka-consumer-groups.sh shows it), then one row per
partition the group has committed offsets for or is assigned: committed offset, log end offset
(the high watermark a consumer can reach) and lag = log end offset - committed offset (``-``
when nothing is committed yet, negative when the committed offset is past the log end, as
``kafka-consumer-groups.sh`` shows it); the total lag adds up the partitions with a committed
offset only (``-`` when there are none); then the members with their assignments. A group the
broker does not know (state DEAD, no members, no offsets) is an error line on stderr, and the
exit status is then 1 (the other groups are still described; with ``--all-groups``, one
deleted since the listing is skipped).

``delete`` removes groups (GROUP arguments or ``--all-groups``, as kafka-consumer-groups.sh
``--delete`` takes them) without active members, with their committed offsets
(DeleteGroups); each group deleted is named on stdout, each refused one on stderr with
Kafka's error (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), and any refusal makes the exit status 1.

``reset-offsets`` is in its own module (``reset_offsets``).
On a TLS or SASL listener, pass the client settings with ``-X`` (``security.protocol``,
``sasl.*``, ...).
"""

from __future__ import annotations

import click

from tiered_mq.cli import reset_offsets
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
from tiered_mq.client.admin import GroupDescription


@click.group("groups")
def command() -> None:
    """List, describe and delete consumer groups; reset their offsets."""


command.add_command(reset_offsets.command)


@command.command("list")
@admin_options
@reports_errors
def list_(bootstrap: str, properties: tuple[str, ...], timeout: float) -> None:
    """List consumer groups with their type and state.

    The columns are those of kafka-consumer-groups.sh --list --type --state: GROUP, TYPE
    (Classic: the JoinGroup/SyncGroup protocol, the one this broker serves; Consumer: KIP-848's),
    STATE.
    """
    groups = admin_client(bootstrap, timeout, properties).list_groups()
    if not groups:
        click.echo("No consumer groups.")
        return
    click.echo(
        format_table(
            ["GROUP", "TYPE", "STATE"],
            [(g.group_id, g.group_type, g.state) for g in groups],
        )
    )


def total_lag(desc: GroupDescription) -> str:
    """The lag summed over the partitions with a committed offset and a known log end (the
    others have none: no commit, or an offline partition whose log end is unknown)."""
    lags = [p.lag for p in desc.offsets if p.lag is not None]
    if not lags:
        if any(p.committed_offset is not None for p in desc.offsets):
            return "Total lag: - (log ends unknown)"
        return "Total lag: - (no committed offsets)"
    uncommitted = sum(p.committed_offset is None for p in desc.offsets)
    unknown = sum(p.committed_offset is not None and p.lag is None for p in desc.offsets)
    notes = [f"{uncommitted} partition(s) without a committed offset"] if uncommitted else []
    notes += [f"{unknown} partition(s) whose log end is unknown"] if unknown else []
    note = f" ({'; '.join(notes)})" if notes else ""
    return f"Total lag: {sum(lags)}{note}"


def coordinator_cell(desc: GroupDescription) -> str:
    """The coordinator as kafka-consumer-groups.sh shows it, ``host:port (id)``; the id alone
    without an address, ``-`` without either."""
    if desc.coordinator is None:
        return "-"
    if desc.coordinator_address is None:
        return str(desc.coordinator)
    return f"{desc.coordinator_address} ({desc.coordinator})"


def render_group(desc: GroupDescription) -> str:
    clients = {m.member_id: m for m in desc.members}
    out = [
        f"Group: {desc.group_id}  State: {desc.state}  Coordinator: {coordinator_cell(desc)}"
        f"  Assignor: {desc.protocol or '-'}  Members: {len(desc.members)}"
    ]
    if desc.offsets:
        out.append(
            format_table(
                ["TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "CLIENT-ID", "HOST"],
                [
                    (
                        p.topic,
                        p.partition,
                        p.committed_offset,
                        p.log_end_offset,
                        p.lag,
                        clients[p.member_id].client_id if p.member_id in clients else None,
                        clients[p.member_id].host if p.member_id in clients else None,
                    )
                    for p in desc.offsets
                ],
            )
        )
        out.append(total_lag(desc))
    else:
        out.append("No committed offsets and no assignment.")
    if desc.members:
        out.append("")
        out.append(
            format_table(
                ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"],
                [
                    (m.member_id, m.client_id, m.host, [str(tp) for tp in m.assignment])
                    for m in desc.members
                ],
            )
        )
    return "\n".join(out)


@command.command("describe")
@name_argument("groups", "group", many=True)
@all_groups_option
@admin_options
@reports_errors
def describe(
    groups: tuple[str, ...],
    all_groups: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Committed offsets, log end offsets, lag and members of GROUP(s) or --all-groups."""
    check_groups(groups, all_groups)
    admin = admin_client(bootstrap, timeout, properties)
    chosen = group_ids(admin, groups)
    if not chosen:
        click.echo("No consumer groups.")
    missing = 0
    for i, group in enumerate(chosen):
        desc = admin.describe_group(group)
        if desc.state == "DEAD" and not desc.members and not desc.offsets:
            # Kafka's DescribeGroups says DEAD for a group id it does not know; since KIP-1043
            # kafka-consumer-groups.sh reports GroupIdNotFoundException and exits 1
            if groups:  # --all-groups: one deleted since the listing is no error
                message = f"Error: GROUP_ID_NOT_FOUND: consumer group {group} does not exist"
                click.echo(message, err=True)
                missing += 1
            continue
        click.echo(("\n" if i else "") + render_group(desc))
    if missing:
        raise click.exceptions.Exit(1)


REFUSAL_HINTS = {
    "NON_EMPTY_GROUP": "it has active members; stop its consumers first",
    "GROUP_ID_NOT_FOUND": "no such group",
}
"""What a user can do about DeleteGroups' usual refusals."""


@command.command("delete")
@name_argument("groups", "group", many=True)
@all_groups_option
@admin_options
@reports_errors
def delete(
    groups: tuple[str, ...],
    all_groups: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Delete GROUP(s) or --all-groups, with their committed offsets.

    A group with active members is refused (NON_EMPTY_GROUP).
    """
    check_groups(groups, all_groups)
    admin = admin_client(bootstrap, timeout, properties)
    chosen = group_ids(admin, groups)
    if not chosen:
        click.echo("No consumer groups.")
        return
    errors = admin.delete_groups(chosen)
    for group, err in errors.items():
        if err is None:
            click.echo(f"Deleted consumer group '{group}'.")
        else:
            hint = REFUSAL_HINTS.get(err.name, err.error_message)
            click.echo(f"Error: {err.name}: consumer group '{group}' not deleted: {hint}", err=True)
    if any(err is not None for err in errors.values()):
        raise click.exceptions.Exit(1)
