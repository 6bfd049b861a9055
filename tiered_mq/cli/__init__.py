"""The ``tiered-mq`` command.

Each sub-command lives in its own module of this package and exposes ``command`` (a click
command or group); the modules are listed here in the order ``--help`` shows them.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from tiered_mq import __version__

_COMMAND_MODULES = ("dev", "topics", "configs", "produce", "consume", "groups", "users", "tier")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tiered-mq")
def main() -> None:
    """tiered-mq: a Kafka-compatible streaming platform with tiered storage."""


for _name in _COMMAND_MODULES:
    _module_name = f"{__name__}.{_name}"
    if importlib.util.find_spec(_module_name) is not None:
        main.add_command(importlib.import_module(_module_name).command)
