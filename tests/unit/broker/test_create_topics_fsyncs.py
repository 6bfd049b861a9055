"""CreateTopics of many partitions through an in-process broker: the fsyncs a new partition
costs, and what is on disk when the answer comes.

Before, each partition cost 7 fsyncs one after another (``partition.metadata`` and its
directory, the directory again for the first segment, the two checkpoint files and the
directory twice more): 2000 partitions took 5 to 13 s here, nearly all of it waiting for the
disk. Now a new log writes no checkpoint (absent reads as what it would hold) and the
``partition.metadata`` files and new directories of the request are fsynced together: 2 per
partition, plus the data dir once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_produce_fetch import batch, part, produce_body
from tiered_mq.hot import log_files, partition_metadata
from tiered_mq.protocol.api_versions import ApiKey

PARTITIONS = 200


async def test_a_new_partition_costs_two_fsyncs_and_is_on_disk_at_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d"
    async with serving(data) as (broker, client):
        calls: list[int] = []
        real_fsync, real_fdatasync = os.fsync, os.fdatasync

        def fsync(fd: int) -> None:
            calls.append(fd)
            real_fsync(fd)

        def fdatasync(fd: int) -> None:
            calls.append(fd)
            real_fdatasync(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "fdatasync", fdatasync)
        r = await client.call(
            ApiKey.CREATE_TOPICS,
            4,
            {
                "topics": [{"name": "many", "num_partitions": PARTITIONS, "replication_factor": 1}],
                "timeout_ms": 30000,
            },
        )
        monkeypatch.undo()
        assert r["topics"][0]["error_code"] == 0
        # 2 a partition (its partition.metadata and its directory); the rest: the data dir
        # and the cluster metadata file with its directory
        assert len(calls) <= 2 * PARTITIONS + 4, len(calls)

        topic_id = broker.coordinator.get_topic("many").topic_id  # type: ignore[union-attr]
        for i in range(PARTITIONS):
            dir = data / f"many-{i}"
            assert partition_metadata.read(dir) == topic_id
            assert log_files.log_file(dir, 0).exists()
            assert not list(dir.glob("*.tmp"))
        for i in (0, PARTITIONS // 2, PARTITIONS - 1):  # each serves produce requests
            answer = await client.call(
                ApiKey.PRODUCE, 8, produce_body("many", batch([b"v"]), partition=i)
            )
            assert part(answer)["error_code"] == 0, answer
