"""librdkafka's log lines in the CLI: on stderr only with ``-v``/``--verbose``.

The SDK hands librdkafka's log lines to the logger ``LIBRDKAFKA_LOG`` (``client/config.py``:
each distinct line at most once a minute). With no handler configured, Python's last-resort
handler printed its warnings and errors (``FAIL [...] Connect to ipv4#127.0.0.1:9092 failed:
Connection refused``) on stderr next to the command's own error line, which says the same (with
the unreachable-broker hint). For one run of ``tiered-mq``, ``client_log`` gives that logger a
handler of its own, writing each line (the bare message, as before) to that run's stderr, and
silent unless the command was given ``-v`` (``show_client_log``); the logger does not
propagate meanwhile, so no other handler prints the lines either. With ``-v`` the logger's level
is DEBUG for the run, so that the debug lines asked for with ``-X debug=...`` show too (the
root logger's WARNING dropped them). All of these come back as they were when the run ends
(tests run many commands in one process).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from tiered_mq.client.config import LIBRDKAFKA_LOG

SILENT = logging.CRITICAL + 1
"""The handler's level without ``-v``: above every level, so it writes nothing."""
_META_KEY = "tiered_mq.cli.client_log"
"""Where the run's handler is kept in ``click.Context.meta`` (shared by its sub-contexts)."""


@contextmanager
def client_log(ctx: click.Context) -> Iterator[logging.Handler]:
    """For the ``with`` block: ``LIBRDKAFKA_LOG`` writes to stderr through a handler that is
    silent until ``show_client_log``, and to no other handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(SILENT)
    propagate, level = LIBRDKAFKA_LOG.propagate, LIBRDKAFKA_LOG.level
    LIBRDKAFKA_LOG.addHandler(handler)
    LIBRDKAFKA_LOG.propagate = False
    ctx.meta[_META_KEY] = handler
    try:
        yield handler
    finally:
        ctx.meta.pop(_META_KEY, None)
        LIBRDKAFKA_LOG.propagate = propagate
        LIBRDKAFKA_LOG.setLevel(level)
        LIBRDKAFKA_LOG.removeHandler(handler)


def show_client_log(ctx: click.Context) -> None:
    """Makes the run's handler (``client_log``) write every line, librdkafka's debug lines
    included; without one (a command invoked outside ``tiered-mq``), the lines already reach
    stderr."""
    handler = ctx.meta.get(_META_KEY)
    if isinstance(handler, logging.Handler):
        handler.setLevel(logging.NOTSET)
        LIBRDKAFKA_LOG.setLevel(logging.DEBUG)
