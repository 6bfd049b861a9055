"""ProducerIdManager: hands out producer ids for InitProducerId, never the same one twice.

Ids come from blocks reserved durably through the coordinator
(``allocate_producer_id_block``, persisted before any id of the block is returned), so a
restart, or a crash, skips the rest of the block instead of reusing ids.
"""

from __future__ import annotations

import asyncio

from tiered_mq.coordination.base import Coordinator


class ProducerIdManager:
    def __init__(self, coordinator: Coordinator, block_size: int = 1000) -> None:
        self._coordinator = coordinator
        self._block_size = block_size
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def generate_producer_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                self._next, self._end = await self._coordinator.allocate_producer_id_block(
                    self._block_size
                )
            pid = self._next
            self._next += 1
            return pid
