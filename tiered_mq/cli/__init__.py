"""The ``tiered-mq`` command.

Each sub-command lives in its own module of this package and exposes ``command`` (a click
command or group); the modules are listed here in the order ``--help`` shows them. A module is
imported only when its command runs (or ``--help`` lists them all): a client command such as
``topics list`` does not import the broker, which ``dev`` needs and which took most of every
command's start-up time.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from tiered_mq import __version__

_COMMAND_MODULES = ("dev", "topics", "configs", "produce", "consume", "groups", "users", "tier")


class _LazyGroup(click.Group):
    """The sub-commands of ``_COMMAND_MODULES``, each imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in _COMMAND_MODULES if _module(name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _module(cmd_name)
        if module is None:
            return None
        command: click.Command = importlib.import_module(module).command
        return command


def _module(name: str) -> str | None:
    """The module of sub-command ``name``, if it is one and its module exists."""
    module = f"{__name__}.{name}"
    if name not in _COMMAND_MODULES or importlib.util.find_spec(module) is None:
        return None
    return module


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tiered-mq")
def main() -> None:
    """tiered-mq: a Kafka-compatible streaming platform with tiered storage."""
