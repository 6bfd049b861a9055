"""FindCoordinator for a group whose ``__consumer_offsets`` partition failed on storage: as in
Kafka, where a full log directory goes offline and the partition has no leader, the answer is
COORDINATOR_NOT_AVAILABLE (clients back off and look again), and the group's OffsetCommit is
answered NOT_COORDINATOR; groups on other partitions are served as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_produce_fetch import create
from tiered_mq import errors
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition


def _commit(group: str) -> dict[str, Any]:
    partition = {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "retention_time_ms": -1,
        "topics": [{"name": "t", "partitions": [partition]}],
    }


async def test_a_group_whose_offsets_partition_failed_has_no_coordinator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partitions = {"offsets.topic.num.partitions": "4"}
    async with serving(tmp_path / "d", **partitions) as (broker, client):
        await create(client, "t")
        coordinator = broker.group_coordinator
        other = next(
            f"g{i}"
            for i in range(100)
            if coordinator.partition_for(f"g{i}") != coordinator.partition_for("g")
        )

        async def full(tp: TopicPartition, records: bytes) -> int:
            raise errors.KafkaStorageError(f"{tp}: [Errno 28] No space left on device")

        monkeypatch.setattr(broker.replica_manager, "append_internal", full)
        r = await client.call(ApiKey.OFFSET_COMMIT, 2, _commit("g"))
        assert r["topics"][0]["partitions"][0]["error_code"] == errors.NotCoordinatorError.errno

        found = await client.call(ApiKey.FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
        assert found["error_code"] == errors.CoordinatorNotAvailableError.errno
        assert found["node_id"] == -1
        found = await client.call(ApiKey.FIND_COORDINATOR, 1, {"key": other, "key_type": 0})
        assert (found["error_code"], found["node_id"]) == (0, broker.config.node_id)
