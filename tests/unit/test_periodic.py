"""periodic.schedule: the background loop of the coordinators' expirations and the cleaner."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from tiered_mq.periodic import schedule

log = logging.getLogger("tests.periodic")


async def test_runs_every_period_and_goes_on_after_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[float] = []
    fourth = asyncio.Event()
    loop = asyncio.get_running_loop()
    started = loop.time()

    async def task() -> None:
        runs.append(loop.time() - started)
        if len(runs) == 2:
            raise RuntimeError("disk gone")
        if len(runs) == 4:
            fourth.set()

    with caplog.at_level(logging.ERROR, logger="tests.periodic"):
        job = loop.create_task(schedule("sweeping", task, 20, log))
        await asyncio.wait_for(fourth.wait(), 5)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    assert runs[0] >= 0.019  # the first run comes a period after the start
    assert all(b - a >= 0.019 for a, b in itertools.pairwise(runs))
    failures = [r for r in caplog.records if r.name == "tests.periodic"]
    assert [r.getMessage() for r in failures] == ["sweeping failed"]
    assert failures[0].exc_info is not None and "disk gone" in str(failures[0].exc_info[1])


async def test_cancelling_during_a_run_ends_the_schedule() -> None:
    entered = asyncio.Event()
    finished: list[bool] = []

    async def task() -> None:
        entered.set()
        await asyncio.sleep(10)
        finished.append(True)

    job = asyncio.get_running_loop().create_task(schedule("slow", task, 1, log))
    await asyncio.wait_for(entered.wait(), 5)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert job.cancelled() and not finished
