"""What every client sub-command shares: the bootstrap option, ``k=v`` parsing, error
reporting and plain-text tables.

Broker and client errors reach the user as ``Error: NAME: message`` on stderr with exit
status 1 (``ClientError`` -> ``click.ClickException``); nothing prints a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

import click
from confluent_kafka import KafkaException

from tiered_mq.client.config import BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP
from tiered_mq.client.errors import ClientError

P = ParamSpec("P")
R = TypeVar("R")

bootstrap_option = click.option(
    "-b",
    "--bootstrap-server",
    "bootstrap",
    envvar=BOOTSTRAP_ENV,
    default=DEFAULT_BOOTSTRAP,
    show_default=True,
    show_envvar=True,
    metavar="HOST:PORT[,...]",
    help="Broker(s) to bootstrap from.",
)

property_option = click.option(
    "-X",
    "--property",
    "properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="Extra librdkafka client property (repeatable).",
)


def parse_kv(values: Iterable[str], what: str = "config") -> dict[str, str]:
    """``["a=1", "b=x=y"]`` -> ``{"a": "1", "b": "x=y"}``; no ``=`` or no key: usage error."""
    result: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=what)
        result[key] = value
    return result


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turns ``ClientError`` (and librdkafka's config errors) into a clean exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ClientError as err:
            raise click.ClickException(str(err)) from err
        except KafkaException as err:  # e.g. an unknown librdkafka property
            raise click.ClickException(str(ClientError.wrap(err))) from err
        except ValueError as err:  # a config value the SDK's dataclasses refuse
            raise click.ClickException(str(err)) from err

    return wrapper


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Left-aligned columns separated by two spaces; ``None`` shows as ``-``."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [list(headers), *cells]
    ]
    return "\n".join(lines)
