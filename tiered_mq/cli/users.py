"""``tiered-mq users``: SCRAM users, as ``kafka-configs.sh --entity-type users`` manages them.

``set`` creates or replaces a user's SCRAM-SHA-256 or SCRAM-SHA-512 credential (the password is
read from a prompt or ``--password-stdin``; librdkafka salts and hashes it, the broker stores
only the derived keys); ``delete`` removes one; ``list`` shows every user's mechanisms and
iterations. On a SASL listener, pass the admin's login with ``-X`` (``sasl.mechanism``,
``sasl.username``, ...); when ACLs are on, altering users needs ALTER on the cluster and
listing them DESCRIBE (``list`` checks it first and exits 1 with CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import sys

import click

from tiered_mq.cli._common import admin_client, admin_options, format_table, reports_errors

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

mechanism_option = click.option(
    "-m",
    "--mechanism",
    type=click.Choice(MECHANISMS, case_sensitive=False),
    default=MECHANISMS[0],
    show_default=True,
    help="The SASL/SCRAM mechanism of the credential.",
)


@click.group("users")
def command() -> None:
    """Manage SCRAM users (SASL/SCRAM-SHA-256 and -512 logins)."""


@command.command("set")
@click.argument("user")
@mechanism_option
@click.option(
    "--iterations",
    default=8192,
    show_default=True,
    type=click.IntRange(4096, 16384),
    help="SCRAM iterations of the salted password (Kafka's bounds).",
)
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin.")
@admin_options
@reports_errors
def set_(
    user: str,
    mechanism: str,
    iterations: int,
    password_stdin: bool,
    bootstrap: str,
    properties: tuple[str, ...],
    timeout: float,
) -> None:
    """Create USER, or replace its credential for the mechanism."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    elif not sys.stdin.isatty():  # the prompt would echo the password, or read nothing
        raise click.UsageError("stdin is not a terminal: pipe the password with --password-stdin")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    if not password:
        raise click.BadParameter("the password is empty", param_hint="password")
    admin_client(bootstrap, timeout, properties).set_scram_credential(
        user, password, mechanism, iterations
    )
    click.echo(f"Set {mechanism} credential of {user} ({iterations} iterations).")


@command.command("delete")
@click.argument("user")
@mechanism_option
@admin_options
@reports_errors
def delete(
    user: str, mechanism: str, bootstrap: str, properties: tuple[str, ...], timeout: float
) -> None:
    """Delete USER's credential for the mechanism."""
    admin_client(bootstrap, timeout, properties).delete_scram_credential(user, mechanism)
    click.echo(f"Deleted {mechanism} credential of {user}.")


@command.command("list")
@admin_options
@reports_errors
def list_(bootstrap: str, properties: tuple[str, ...], timeout: float) -> None:
    """List SCRAM users with their mechanisms and iterations."""
    users = admin_client(bootstrap, timeout, properties).scram_users()
    if not users:
        click.echo("No SCRAM users.")
        return
    rows = [(u.user, u.mechanism, u.iterations) for u in users]
    click.echo(format_table(["USER", "MECHANISM", "ITERATIONS"], rows))
