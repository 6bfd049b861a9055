"""Ctrl-C during librdkafka calls that run Python callbacks (log lines, delivery reports).

confluent-kafka runs those callbacks from inside its C calls (``Producer.flush`` and ``poll``,
``Consumer.poll`` and ``consume``); a ``KeyboardInterrupt`` raised in one of them is lost
there: the call goes on until its timeout, then fails with ``SystemError: ... returned NULL
without setting an exception``. ``SigintDeferred`` therefore records a SIGINT that arrives
during such a call and the caller raises ``KeyboardInterrupt`` once the call has returned, in
its own code; callers split long waits into rounds of at most ``ROUND_S`` so that this comes
within a fraction of a second.

Only Python's own SIGINT handler (``signal.default_int_handler``) is replaced, and only on the
main thread (the only one signal handlers run on): a program's own handler (the CLI's
``CtrlC``, a server's graceful stop) is left alone.
"""

from __future__ import annotations

import importlib
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

_signal: Any = importlib.import_module("_signal")
"""The C module under ``signal`` (no stubs): ``signal.signal`` and ``getsignal`` add ~10 us
each of enum wrapping, and ``Consumer.poll`` goes through here on every call."""

ROUND_S = 0.2
"""Longest single librdkafka wait of a call a Ctrl-C should end."""

_MAIN_THREAD = threading.main_thread().ident


class SigintDeferred:
    """For a ``with`` block, a SIGINT sets ``pending`` instead of raising ``KeyboardInterrupt``
    (when Python's default handler is the one in place, on the main thread); the default
    handler comes back after the block. About 2 us a block."""

    __slots__ = ("_installed", "pending")

    def __init__(self) -> None:
        self.pending = False
        self._installed = False

    def __enter__(self) -> SigintDeferred:
        if (
            threading.get_ident() == _MAIN_THREAD
            and _signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            _signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            self._installed = False
            _signal.signal(signal.SIGINT, signal.default_int_handler)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.pending = True

    def raise_if_pending(self) -> None:
        """Raises the ``KeyboardInterrupt`` of a SIGINT the block deferred."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt
