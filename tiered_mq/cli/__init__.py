"""The ``tiered-mq`` command.

Each sub-command lives in its own module of this package and exposes ``command`` (a click
command or group); the modules are listed here in the order ``--help`` shows them. A module is
imported only when its command runs (or ``--help`` lists them all): a client command such as
``topics list`` does not import the broker, which ``dev`` needs and which took most of every
command's start-up time.

Every command ends as Unix tools do when stdout's reader has gone (``| head``, ``| grep -q``):
exit status 0, nothing on stderr (click's own handling exits 1). A Ctrl-C while a command's
module is imported (most of the start-up), or while a command waits for the broker (any
command that does not handle Ctrl-C itself, as ``produce`` and ``consume`` do), exits 130
without a traceback or "Aborted!". librdkafka's own log lines reach stderr only with ``-v``
(``_client_log.py``): a failure is the command's one error line.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

import click

from tiered_mq import __version__
from tiered_mq.cli._client_log import client_log
from tiered_mq.cli._stdout import discard_stdout, reader_gone

INTERRUPTED_EXIT = 130
"""128 + SIGINT: what a shell reports for a command ended by Ctrl-C."""

_COMMAND_MODULES = ("dev", "topics", "configs", "produce", "consume", "groups", "users", "tier")


PROG_NAME = "tiered-mq"
"""The name usage lines and ``--version`` show, however the command was started (``python -m
tiered_mq`` would show ``python -m tiered_mq``, click's guess from the interpreter's arguments)."""


class _LazyGroup(click.Group):
    """The sub-commands of ``_COMMAND_MODULES``, each imported on first use."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's ``main``, the program named ``PROG_NAME`` unless the caller names it."""
        if len(args) < 2 and kwargs.get("prog_name") is None:
            kwargs["prog_name"] = PROG_NAME
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in _COMMAND_MODULES if _module(name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _module(cmd_name)
        if module is None:
            return None
        try:
            command: click.Command = importlib.import_module(module).command
        except KeyboardInterrupt:  # Ctrl-C while starting: nothing was done yet
            ctx.exit(INTERRUPTED_EXIT)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parses the group's options (``--help`` and ``--version`` print here)."""
        with _closed_stdout_ends(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Runs the command, then flushes stdout, so that a reader gone before the
        interpreter's own flush at exit is seen here. A Ctrl-C no command handled itself
        (an admin request waiting for a broker) exits 130 quietly: click would print
        "Aborted!" and exit 1."""
        with _closed_stdout_ends(ctx):
            try:
                result = super().invoke(ctx)
                sys.stdout.flush()
            except KeyboardInterrupt:
                ctx.exit(INTERRUPTED_EXIT)
            return result


@contextlib.contextmanager
def _closed_stdout_ends(ctx: click.Context) -> Iterator[None]:
    """A BrokenPipeError from writing to stdout after its reader went away ends the run with
    status 0; any other BrokenPipeError (a socket's) propagates."""
    try:
        yield
    except BrokenPipeError:
        if not reader_gone(sys.stdout):
            raise
        discard_stdout()
        ctx.exit(0)


def _module(name: str) -> str | None:
    """The module of sub-command ``name``, if it is one and its module exists."""
    module = f"{__name__}.{name}"
    if name not in _COMMAND_MODULES or importlib.util.find_spec(module) is None:
        return None
    return module


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=PROG_NAME)
@click.pass_context
def main(ctx: click.Context) -> None:
    """tiered-mq: a Kafka-compatible streaming platform with tiered storage."""
    ctx.with_resource(client_log(ctx))  # librdkafka's lines: only with -v (_client_log.py)
