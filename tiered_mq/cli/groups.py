"""``tiered-mq groups``: list consumer groups; describe one with its lag.

``describe`` prints one row per partition the group has committed offsets for or is
assigned: committed offset, log end offset (the high watermark a consumer can reach) and
lag = log end offset - committed offset (``-`` when nothing is committed yet); then the
members with their assignments.
"""

from __future__ import annotations

import click

from tiered_mq.cli._common import bootstrap_option, format_table, reports_errors
from tiered_mq.client.admin import Admin, GroupDescription
from tiered_mq.client.config import AdminConfig

timeout_option = click.option(
    "--timeout", default=15.0, show_default=True, help="Seconds to wait for the broker."
)


@click.group("groups")
def command() -> None:
    """List consumer groups and show their lag."""


@command.command("list")
@bootstrap_option
@timeout_option
@reports_errors
def list_(bootstrap: str, timeout: float) -> None:
    """List consumer groups."""
    admin = Admin(AdminConfig(bootstrap_servers=bootstrap, request_timeout_s=timeout))
    groups = admin.list_groups()
    if not groups:
        click.echo("No consumer groups.")
        return
    click.echo(
        format_table(
            ["GROUP", "STATE", "TYPE"],
            [(g.group_id, g.state, "simple" if g.is_simple else "consumer") for g in groups],
        )
    )


def render_group(desc: GroupDescription) -> str:
    clients = {m.member_id: m for m in desc.members}
    out = [
        f"Group: {desc.group_id}  State: {desc.state}  Coordinator: {desc.coordinator}"
        f"  Assignor: {desc.protocol or '-'}  Members: {len(desc.members)}"
    ]
    total = sum(p.lag for p in desc.offsets if p.lag is not None)
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
        out.append(f"Total lag: {total}")
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
@click.argument("group")
@bootstrap_option
@timeout_option
@reports_errors
def describe(group: str, bootstrap: str, timeout: float) -> None:
    """Committed offsets, log end offsets, lag and members of GROUP."""
    admin = Admin(AdminConfig(bootstrap_servers=bootstrap, request_timeout_s=timeout))
    click.echo(render_group(admin.describe_group(group)))
