"""Periodic background work of the broker's coordinators and the log cleaner.

Kafka runs such work on its ``KafkaScheduler`` (``schedule(name, task, delay, period)``); here
each is an asyncio task awaiting :func:`schedule`, cancelled when its owner closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable


async def schedule(
    what: str, task: Callable[[], Awaitable[object]], period_ms: float, log: logging.Logger
) -> None:
    """Await ``task()`` every ``period_ms`` milliseconds until cancelled.

    The first run comes one period after the start, each next one a period after the previous
    one ended (runs never overlap). A run that raises is logged on ``log`` as ``"<what>
    failed"`` with its traceback and the schedule goes on; cancellation ends it, during a run
    too (CancelledError is no Exception).
    """
    while True:
        await asyncio.sleep(period_ms / 1000)
        try:
            await task()
        except Exception:
            log.exception("%s failed", what)
