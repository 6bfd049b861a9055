"""Blocking work in a worker thread that a cancellation can cut short.

``await to_thread_abandonable(fn)`` runs ``fn(abandon)`` in a worker thread, as
``asyncio.to_thread``. ``abandon`` is a ``threading.Event``: ``fn`` looks at it between steps
(a partition to open, a poll for a ZooKeeper connection) and returns or raises as soon as it is
set. Cancelled, the awaiting task sets it, waits for the thread to end (a step in flight is not
interrupted: a log's recovery ends before the thread does), hands a result ``fn`` still
returned to ``discard`` (in a worker thread: closing what it opened) and is then cancelled. So a
cancelled caller leaves no thread behind at work on files or sockets (a thread left running
kept the process from exiting until it ended) and no exception unretrieved.

Used by the broker's start (Broker.start through tiered-mq dev): a stop asked for during the
start cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def to_thread_abandonable(
    fn: Callable[[threading.Event], T], discard: Callable[[T], None] | None = None
) -> T:
    """``fn(abandon)`` in a worker thread; see the module docstring for a cancellation."""
    abandon = threading.Event()
    work = asyncio.ensure_future(asyncio.to_thread(fn, abandon))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        abandon.set()
        await asyncio.wait({work})
        if not work.cancelled() and work.exception() is None and discard is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(discard, work.result())
        raise
