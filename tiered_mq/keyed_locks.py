"""KeyedLocks: one asyncio lock per key, held only while in use.

    locks = KeyedLocks[str]()
    async with locks.hold("orders"):   # waits for another holder of "orders", not of others
        ...

A key's lock exists while a task holds or awaits it and is dropped when the last one leaves,
so the table never outgrows the keys in use: a lock per topic name ever written would grow
with every topic created and deleted over the broker's life. ``len(locks)`` is the number of
keys in use. Event-loop only (not thread-safe); a holder cancelled while waiting leaves as if
it had released.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass
class _Entry:
    users: int = 0  # tasks holding or awaiting the lock
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class KeyedLocks(Generic[K]):
    def __init__(self) -> None:
        self._entries: dict[K, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether a task holds or awaits ``key``'s lock."""
        return key in self._entries

    @contextlib.asynccontextmanager
    async def hold(self, key: K) -> AsyncIterator[None]:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[key]
