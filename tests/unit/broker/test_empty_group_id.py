"""The empty group id, as Kafka serves it for backwards compatibility (Java consumers before 2.2
had ``group.id=""`` and committed under it): FindCoordinator finds its coordinator, OffsetCommit
and OffsetFetch store and return its offsets (kept across a restart), DeleteGroups deletes it;
the membership APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) refuse it with
INVALID_GROUP_ID, even once a commit has made it a group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_produce_fetch import create
from tiered_mq.errors import InvalidGroupIdError
from tiered_mq.protocol.api_versions import ApiKey


def _commit(offset: int) -> dict[str, Any]:
    return {
        "group_id": "",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "retention_time_ms": -1,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "committed_offset": offset, "committed_metadata": "m"}
                ],
            }
        ],
    }


async def _committed(client: Client, version: int) -> list[tuple[int, int, int]]:
    body = {"group_id": "", "topics": [{"name": "t", "partition_indexes": [0]}]}
    r = await client.call(ApiKey.OFFSET_FETCH, version, body)
    assert r["error_code"] == 0
    return [
        (p["partition_index"], p["committed_offset"], p["error_code"])
        for t in r["topics"]
        for p in t["partitions"]
    ]


async def test_the_empty_group_commits_and_fetches_offsets(tmp_path: Path) -> None:
    async with serving(tmp_path / "d") as (broker, client):
        await create(client, "t")
        for version in (0, 1, 2):
            r = await client.call(ApiKey.FIND_COORDINATOR, version, {"key": "", "key_type": 0})
            assert (r["error_code"], r["node_id"]) == (0, broker.config.node_id), f"v{version}"
        for version, offset in ((2, 3), (7, 5)):
            r = await client.call(ApiKey.OFFSET_COMMIT, version, _commit(offset))
            assert r["topics"][0]["partitions"][0]["error_code"] == 0, f"v{version}"
            assert await _committed(client, 1) == [(0, offset, 0)]
        assert await _committed(client, 5) == [(0, 5, 0)]
        join = {
            "group_id": "",
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        }
        r = await client.call(ApiKey.JOIN_GROUP, 5, join)
        assert r["error_code"] == InvalidGroupIdError.errno
        member = {"group_id": "", "generation_id": 1, "member_id": "m"}
        r = await client.call(ApiKey.SYNC_GROUP, 3, {**member, "assignments": []})
        assert r["error_code"] == InvalidGroupIdError.errno
        r = await client.call(ApiKey.HEARTBEAT, 3, member)
        assert r["error_code"] == InvalidGroupIdError.errno
        leave = {"group_id": "", "members": [{"member_id": "m"}]}
        r = await client.call(ApiKey.LEAVE_GROUP, 3, leave)
        assert (r["error_code"], r["members"]) == (InvalidGroupIdError.errno, [])

    async with serving(tmp_path / "d") as (broker, client):
        assert await _committed(client, 5) == [(0, 5, 0)]  # on __consumer_offsets
        r = await client.call(ApiKey.DELETE_GROUPS, 1, {"groups_names": [""]})
        assert [(g["group_id"], g["error_code"]) for g in r["results"]] == [("", 0)]
        assert await _committed(client, 5) == [(0, -1, 0)]
