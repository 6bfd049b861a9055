"""Blocking work in a worker thread that a cancellation can cut short.

``await to_thread_abandonable(fn)`` runs ``fn(abandon)`` in a worker thread, as
``asyncio.to_thread``. ``abandon`` is a ``threading.Event``: ``fn`` looks at it between steps
(a partition to open, a poll for a ZooKeeper connection, a chunk of a log's recovery scan) and
returns or raises as soon as it is set (:func:`check` raises :class:`AbandonedError`).
Cancelled, the awaiting task sets it, waits for the thread to end (a step in flight is not
interrupted: it ends before the thread does), hands a result ``fn`` still
returned to ``discard`` (in a worker thread: closing what it opened) and is then cancelled. So a
cancelled caller leaves no thread behind at work on files or sockets (a thread left running
kept the process from exiting until it ended) and no exception unretrieved.

With ``executor``, ``fn`` and ``discard`` run in that executor instead of the default one
(the log cleaner's one-thread executor, whose passes must not overlap).

Used by the broker's start (Broker.start through tiered-mq dev): a stop asked for during the
start cancels it; and by the log cleaner's pass 2 (compaction/cleaner_manager.py): a broker
stop discards the ``.swap`` files of a group rewritten but not swapped in.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

T = TypeVar("T")
A = TypeVar("A")
R = TypeVar("R")


class AbandonedError(Exception):
    """Work given up because its ``abandon`` event was set (raised by :func:`check`)."""


def check(abandon: threading.Event | None, what: str) -> None:
    """Raise :class:`AbandonedError` (naming ``what`` was given up) when ``abandon`` is set;
    None never is."""
    if abandon is not None and abandon.is_set():
        raise AbandonedError(f"{what}: abandoned")


async def to_thread_abandonable(
    fn: Callable[[threading.Event], T],
    discard: Callable[[T], None] | None = None,
    *,
    executor: Executor | None = None,
) -> T:
    """``fn(abandon)`` in a worker thread (of ``executor`` when given); see the module
    docstring for a cancellation."""
    abandon = threading.Event()
    work = asyncio.ensure_future(_in_thread(executor, fn, abandon))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        abandon.set()
        await asyncio.wait({work})
        if not work.cancelled() and work.exception() is None and discard is not None:
            with contextlib.suppress(Exception):
                await _in_thread(executor, discard, work.result())
        raise


async def _in_thread(executor: Executor | None, fn: Callable[[A], R], arg: A) -> R:
    """``fn(arg)`` in ``executor``'s thread, else in ``asyncio.to_thread``'s."""
    if executor is None:
        return await asyncio.to_thread(fn, arg)
    return await asyncio.get_running_loop().run_in_executor(executor, fn, arg)
