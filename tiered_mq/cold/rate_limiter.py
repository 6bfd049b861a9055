"""TokenBucket: an asyncio byte-rate limiter (upload and fetch quotas, bytes/s).

``await acquire(n)`` returns at once while the bucket holds ``n`` tokens; otherwise it takes
them anyway (the bucket goes negative) and sleeps until the debt is repaid, so a request
larger than the burst is still served, just later. Waiters are served in order (a lock).
A rate <= 0 means unlimited.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(rate, 1.0)
        self._clock = clock
        self._tokens = self.burst
        self._last = clock()
        self._lock = asyncio.Lock()

    @property
    def unlimited(self) -> bool:
        return self.rate <= 0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    async def acquire(self, n: int) -> None:
        if self.unlimited or n <= 0:
            return
        async with self._lock:
            self._refill()
            self._tokens -= n
            if self._tokens < 0:
                await asyncio.sleep(-self._tokens / self.rate)
                self._refill()
