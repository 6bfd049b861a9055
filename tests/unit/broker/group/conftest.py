from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import pytest

from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.coordinator import GroupCoordinator

T = TypeVar("T")

CONFIG = GroupConfig(
    offsets_topic_num_partitions=4,
    group_initial_rebalance_delay_ms=100,
    group_min_session_timeout_ms=1000,
)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def spawn(aw: Awaitable[T]) -> asyncio.Task[T]:
    async def run() -> T:
        return await aw

    return asyncio.get_running_loop().create_task(run())


class Harness:
    def __init__(self, rm: FakeReplicaManager, clock: FakeScheduler, coord: GroupCoordinator):
        self.rm, self.clock, self.coord = rm, clock, coord

    async def start_join(
        self,
        member_id: str = "",
        group: str = "g",
        protocols: list[tuple[str, bytes]] | None = None,
        session_timeout_ms: int = 10_000,
        rebalance_timeout_ms: int = 30_000,
        instance_id: str | None = None,
        require_known_member_id: bool = False,
        client_id: str = "c",
    ) -> asyncio.Task[dict[str, Any]]:
        task = spawn(
            self.coord.join_group(
                group_id=group,
                member_id=member_id,
                group_instance_id=instance_id,
                client_id=client_id,
                client_host="/127.0.0.1",
                session_timeout_ms=session_timeout_ms,
                rebalance_timeout_ms=rebalance_timeout_ms,
                protocol_type="consumer",
                protocols=protocols or [("range", b"sub-" + client_id.encode())],
                require_known_member_id=require_known_member_id,
            )
        )
        await settle()
        return task

    async def restart(self) -> Harness:
        await self.coord.close()
        coord = GroupCoordinator(self.rm, CONFIG, self.clock)
        await coord.start()
        return Harness(self.rm, self.clock, coord)


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    rm, clock = FakeReplicaManager(), FakeScheduler()
    coord = GroupCoordinator(rm, CONFIG, clock)
    await coord.start()
    harness = Harness(rm, clock, coord)
    yield harness
    await harness.coord.close()
