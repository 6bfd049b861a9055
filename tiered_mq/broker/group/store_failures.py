"""Failed writes of group state to ``__consumer_offsets``, logged without flooding the log.

On a full disk every write of a group fails: its members are answered with an error, rejoin at
once and fail again, hundreds of times a second (Kafka's coordinator loops the same way). Each
failure logged with its traceback would fill another disk. So per group, the first failure in
each ``LOG_INTERVAL_S`` is logged at ERROR with its traceback; later ones in the interval are
only counted, and the count goes into the next line logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

LOG_INTERVAL_S: Final = 30.0


class StoreFailureLog:
    def __init__(
        self,
        log: logging.Logger,
        interval_s: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._interval_s = interval_s
        self._clock = clock
        self._last: dict[str, float] = {}  # group id -> when its last failure was logged
        self._quiet: dict[str, int] = {}  # group id -> failures counted since

    def failed(self, group_id: str, what: str) -> None:
        """Record a failure of ``what`` for ``group_id``; call it inside the ``except`` block
        (the traceback logged is the exception being handled)."""
        now = self._clock()
        last = self._last.get(group_id)
        if last is not None and now - last < self._interval_s:
            self._quiet[group_id] = self._quiet.get(group_id, 0) + 1
            return
        self._last[group_id] = now
        quiet = self._quiet.pop(group_id, 0)
        more = (
            f" ({quiet} more failures of this group's writes since the last line)" if quiet else ""
        )
        self._log.exception("group %s: %s failed%s", group_id, what, more)
