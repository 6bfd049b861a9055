"""Ctrl-C for commands that call librdkafka from the main thread.

confluent-kafka runs Python callbacks (delivery reports, log lines) from inside its C calls;
a ``KeyboardInterrupt`` raised in one of them is lost there: the call goes on until its
timeout, then fails with ``SystemError: ... returned NULL without setting an exception``.
``CtrlC`` therefore counts each SIGINT and raises ``KeyboardInterrupt`` only when the main
thread was in one of the functions it was given (code that is no callback: reading input, the
SDK's send and flush loops, which confluent-kafka interrupts between rounds); anywhere else the
command reads ``count`` at its next step.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any


class CtrlC:
    """A SIGINT handler for a ``with`` block (the previous one comes back after it)."""

    def __init__(self, *safe: Callable[..., Any]) -> None:
        self._safe = {f.__code__ for f in safe}
        self._previous: Any = None
        self.count = 0
        """SIGINTs received in the block."""

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if frame is not None and frame.f_code in self._safe:
            raise KeyboardInterrupt
