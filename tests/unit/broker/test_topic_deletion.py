"""DeleteTopics through an in-process broker, as Kafka's LogManager.asyncDelete: each partition
directory is renamed ``<topic>-<partition>.<uniqueId>-delete`` before the answer and removed in
the background; leftovers are removed at start and never opened as partitions.

Before, the directory was removed in place: a removal that failed left ``<topic>-<partition>``
behind, and a topic created again with the same name reopened it with its old records."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_produce_fetch import batch, create, part, produce_body
from tiered_mq.hot import log_dir_deletion
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.record.records import decode_batches

KAFKA_STORAGE_ERROR = 56


def delete_dirs(data_dir: Path) -> list[str]:
    return sorted(p.name for p in data_dir.iterdir() if p.name.endswith("-delete"))


async def values(client: Client, topic: str) -> list[tuple[int, bytes | None]]:
    """Every record of partition 0 of ``topic``, from offset 0."""
    fetched = part(
        await client.call(ApiKey.FETCH, 11, fetch_body(topic, 0)), "responses", "partitions"
    )
    assert fetched["error_code"] == 0
    records = fetched["records"] or b""
    return [(r.offset, r.value) for _, rs in decode_batches(records) for r in rs]


async def produce(client: Client, topic: str, *records: bytes) -> None:
    r = await client.call(ApiKey.PRODUCE, 8, produce_body(topic, batch(list(records))))
    assert part(r)["error_code"] == 0


async def delete_topic(client: Client, topic: str) -> int:
    r = await client.call(ApiKey.DELETE_TOPICS, 3, {"topic_names": [topic], "timeout_ms": 5000})
    code: int = r["responses"][0]["error_code"]
    return code


async def test_a_failed_removal_does_not_bring_old_records_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d"

    def fail(path: Any, *args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    async with serving(data) as (broker, client):
        await create(client, "t")
        await produce(client, "t", b"old-1", b"old-2")
        monkeypatch.setattr(shutil, "rmtree", fail)
        assert await delete_topic(client, "t") == 0
        await broker.replica_manager.wait_for_dir_removals()
        (left,) = delete_dirs(data)
        assert left.startswith("t-0.") and not (data / "t-0").exists()
        assert any((data / left).glob("*.log"))  # the removal failed: the old data is there
        await create(client, "t")
        await produce(client, "t", b"new")
        assert await values(client, "t") == [(0, b"new")]
    monkeypatch.undo()
    async with serving(data) as (broker, client):
        await broker.replica_manager.wait_for_dir_removals()
        assert delete_dirs(data) == []  # removed at start
        assert await values(client, "t") == [(0, b"new")]


async def test_leftover_delete_dirs_are_removed_at_start_and_never_opened(tmp_path: Path) -> None:
    """What a crash after the rename leaves: a renamed directory of a topic that still exists
    (here) and one of a topic that does not; neither is opened, both are removed."""
    data = tmp_path / "d"
    async with serving(data) as (_, client):
        await create(client, "t")
        await produce(client, "t", b"old")
    renamed = data / log_dir_deletion.delete_dir_name("t-0")
    (data / "t-0").rename(renamed)
    shutil.copytree(renamed, data / log_dir_deletion.delete_dir_name("gone-0"))
    assert len(delete_dirs(data)) == 2
    async with serving(data) as (broker, client):
        await broker.replica_manager.wait_for_dir_removals()
        assert delete_dirs(data) == []
        assert {tp.topic for tp in broker.replica_manager.partitions} == {"t", "__consumer_offsets"}
        assert await values(client, "t") == []


async def test_a_failed_rename_answers_kafka_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(dir: Path) -> Path:
        raise OSError(5, "Input/output error", str(dir))

    async with serving(tmp_path / "d") as (broker, client):
        await create(client, "t")
        monkeypatch.setattr(log_dir_deletion, "rename_for_deletion", fail)
        assert await delete_topic(client, "t") == KAFKA_STORAGE_ERROR
        assert "t" not in broker.coordinator.list_topics()
        assert not any(tp.topic == "t" for tp in broker.replica_manager.partitions)
