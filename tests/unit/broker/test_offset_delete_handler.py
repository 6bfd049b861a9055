"""OffsetDelete (47) through the wire: the handler's topic checks, ACLs and group errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import ACLS_ON, Client, serving
from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, AclPermissionType, ResourceType
from tiered_mq.topic_partition import TopicPartition


def delete_request(group: str, **topics: list[int]) -> dict[str, Any]:
    return {
        "group_id": group,
        "topics": [
            {"name": name, "partitions": [{"partition_index": p} for p in parts]}
            for name, parts in topics.items()
        ],
    }


def codes(response: dict[str, Any]) -> dict[tuple[str, int], int]:
    return {
        (t["name"], p["partition_index"]): p["error_code"]
        for t in response["topics"]
        for p in t["partitions"]
    }


async def setup(client: Client) -> None:
    """Topics t (2 partitions) and secret; group g with committed offsets on both."""
    for name, n in (("t", 2), ("secret", 1)):
        r = await client.call(
            19,
            4,
            {
                "topics": [
                    {
                        "name": name,
                        "num_partitions": n,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 5000,
            },
        )
        assert r["topics"][0]["error_code"] == 0
    commit = {
        "group_id": "g",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {
                "name": name,
                "partitions": [
                    {"partition_index": p, "committed_offset": 10 + p, "committed_metadata": ""}
                    for p in parts
                ],
            }
            for name, parts in (("t", [0, 1]), ("secret", [0]))
        ],
    }
    r = await client.call(8, 7, commit)
    assert {p["error_code"] for t in r["topics"] for p in t["partitions"]} == {0}


async def committed(client: Client) -> dict[tuple[str, int], int]:
    r = await client.call(9, 5, {"group_id": "g", "topics": None, "require_stable": False})
    return {
        (t["name"], p["partition_index"]): p["committed_offset"]
        for t in r["topics"]
        for p in t["partitions"]
    }


async def test_unknown_topics_and_partitions_and_groups(tmp_path: Path) -> None:
    async with serving(tmp_path / "data") as (_, client):
        await setup(client)
        r = await client.call(47, 0, delete_request("g", t=[1, 2, -1], nope=[0]))
        assert r["error_code"] == 0
        assert codes(r) == {
            ("t", 1): 0,
            ("t", 2): errors.UnknownTopicOrPartitionError.errno,
            ("t", -1): errors.UnknownTopicOrPartitionError.errno,
            ("nope", 0): errors.UnknownTopicOrPartitionError.errno,
        }
        assert await committed(client) == {("t", 0): 10, ("secret", 0): 10}
        r = await client.call(47, 0, delete_request("missing", t=[0]))
        assert (r["error_code"], r["topics"]) == (errors.GroupIdNotFoundError.errno, [])
        r = await client.call(47, 0, delete_request("", t=[0]))
        assert (r["error_code"], r["topics"]) == (errors.InvalidGroupIdError.errno, [])


async def test_acls_delete_on_the_group_and_read_on_the_topic(tmp_path: Path) -> None:
    async with serving(
        tmp_path / "data",
        **ACLS_ON,
    ) as (broker, client):
        await setup(client)

        def acl(
            kind: ResourceType, name: str, op: AclOperation, allow: bool = False
        ) -> dict[str, Any]:
            return {
                "resource_type": kind,
                "resource_name": name,
                "resource_pattern_type": 3,
                "principal": "User:ANONYMOUS",
                "host": "*",
                "operation": op,
                "permission_type": AclPermissionType.ALLOW if allow else AclPermissionType.DENY,
            }

        r = await client.call(
            30, 1, {"creations": [acl(ResourceType.TOPIC, "secret", AclOperation.READ)]}
        )
        assert r["results"][0]["error_code"] == 0
        r = await client.call(47, 0, delete_request("g", t=[0], secret=[0]))
        assert r["error_code"] == 0
        assert codes(r) == {("t", 0): 0, ("secret", 0): errors.TopicAuthorizationFailedError.errno}
        assert await committed(client) == {("t", 1): 11}  # secret: no DESCRIBE now
        assert broker.group_coordinator is not None
        kept = broker.group_coordinator.fetch_offsets("g", [TopicPartition("secret", 0)])[1]
        assert [v.offset for v in kept.values()] == [10]
        creations = [
            acl(ResourceType.GROUP, "g", AclOperation.DELETE),
            acl(ResourceType.GROUP, "g", AclOperation.DESCRIBE, allow=True),
        ]
        r = await client.call(30, 1, {"creations": creations})
        assert [c["error_code"] for c in r["results"]] == [0, 0]
        r = await client.call(47, 0, delete_request("g", t=[1]))
        assert (r["error_code"], r["topics"]) == (errors.GroupAuthorizationFailedError.errno, [])
        assert await committed(client) == {("t", 1): 11}
