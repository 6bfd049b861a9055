"""Metadata of every topic lets waiting requests in between batches of partitions: an answer
of 8,000 partitions took the event loop for 140-220 ms in one piece. Here a callback queued
while the first topic's entry is built must run before the last one is."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, serving
from tiered_mq.broker.handlers import metadata

METADATA = 3
OTHER = "a request"


async def test_every_topic_yields_between_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metadata, "YIELD_EVERY_PARTITIONS", 2)
    events: list[str] = []
    original = metadata._Entries.entry

    def entry(self: metadata._Entries, name: str) -> dict[str, Any]:
        if not events:
            asyncio.get_running_loop().call_soon(events.append, OTHER)
        events.append(name)
        return original(self, name)

    async with serving(tmp_path / "data") as (broker, client):
        names = [f"t{i}" for i in range(6)]
        for name in names:
            await broker.topic_registry.create_topic(name, 1)
        monkeypatch.setattr(metadata._Entries, "entry", entry)
        answer = await Client.call(client, METADATA, 8, {"topics": None})
        listed = sorted(t["name"] for t in answer["topics"] if t["error_code"] == 0)
        assert listed == sorted([*names, "__consumer_offsets"])
        assert OTHER in events[: len(listed) - 1], events
