"""OffsetFetch (9) v6-7 through the wire: require_stable (KIP-447) against offsets a transaction
holds pending, per partition as Kafka's GroupMetadataManager.getOffsets, and the ACL checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import ACLS_ON, Client, serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tests.unit.broker.txn.test_txn_offsets_durability import begin_with_offsets
from tiered_mq import errors
from tiered_mq.broker.acl.binding import AclOperation, AclPermissionType, ResourceType
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

UNSTABLE = errors.UnstableOffsetCommitError.errno
A0, A1, A2 = (TopicPartition("a", p) for p in range(3))


async def fetch(
    client: Client, version: int, topics: dict[str, list[int]] | None, **extra: Any
) -> tuple[int, dict[tuple[str, int], tuple[int, int]]]:
    """Top-level error and (offset, error) per partition."""
    listed = (
        None if topics is None else [{"name": t, "partition_indexes": p} for t, p in topics.items()]
    )
    r = await client.call(
        ApiKey.OFFSET_FETCH, version, {"group_id": "g", "topics": listed, **extra}
    )
    parts = {
        (t["name"], p["partition_index"]): (p["committed_offset"], p["error_code"])
        for t in r["topics"]
        for p in t["partitions"]
    }
    return r["error_code"], parts


async def test_v7_require_stable_answers_unstable_until_the_transaction_commits(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 3, {})
        assert broker.group_coordinator is not None
        await broker.group_coordinator.commit_offsets(
            "g", -1, "", None, -1, {A0: (3, -1, ""), A2: (4, -1, "")}
        )
        pid, epoch = await begin_with_offsets(broker, {A0: 9, A1: 7})
        three = {"a": [0, 1, 2]}
        committed = {("a", 0): (3, 0), ("a", 1): (-1, 0), ("a", 2): (4, 0)}
        for version in (5, 6, 7):  # without require_stable the pending offsets stay hidden
            assert await fetch(client, version, three) == (0, committed)
        assert await fetch(client, 7, three, require_stable=False) == (0, committed)
        # per partition: A0 (committed + pending) and A1 (pending only) are unstable, A2 is not
        stable = {("a", 0): (-1, UNSTABLE), ("a", 1): (-1, UNSTABLE), ("a", 2): (4, 0)}
        assert await fetch(client, 7, three, require_stable=True) == (0, stable)
        # every partition of the group: those with a committed offset only (Kafka's allOffsets)
        every = {("a", 0): (-1, UNSTABLE), ("a", 2): (4, 0)}
        assert await fetch(client, 7, None, require_stable=True) == (0, every)
        assert await fetch(client, 6, None) == (0, {("a", 0): (3, 0), ("a", 2): (4, 0)})

        await tc_of(broker).end_txn("tx", pid, epoch, commit=True)
        after = {("a", 0): (9, 0), ("a", 1): (7, 0), ("a", 2): (4, 0)}
        assert await fetch(client, 7, three, require_stable=True) == (0, after)
        assert await fetch(client, 7, None, require_stable=True) == (0, after)


async def test_v7_require_stable_after_an_abort_keeps_the_old_offsets(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        assert broker.group_coordinator is not None
        await broker.group_coordinator.commit_offsets("g", -1, "", None, -1, {A0: (3, -1, "")})
        pid, epoch = await begin_with_offsets(broker, {A0: 9})
        assert await fetch(client, 7, {"a": [0]}, require_stable=True) == (
            0,
            {("a", 0): (-1, UNSTABLE)},
        )
        await tc_of(broker).end_txn("tx", pid, epoch, commit=False)
        assert await fetch(client, 7, {"a": [0]}, require_stable=True) == (0, {("a", 0): (3, 0)})


def _deny(kind: ResourceType, name: str) -> dict[str, Any]:
    return {
        "resource_type": kind,
        "resource_name": name,
        "resource_pattern_type": 3,  # literal
        "principal": "User:ANONYMOUS",
        "host": "*",
        "operation": AclOperation.DESCRIBE,
        "permission_type": AclPermissionType.DENY,
    }


async def test_v6_v7_acls_describe_on_the_group_and_the_topics(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL, **ACLS_ON) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        await broker.topic_registry.create_topic("secret", 1, {})
        assert broker.group_coordinator is not None
        secret0 = TopicPartition("secret", 0)
        await broker.group_coordinator.commit_offsets(
            "g", -1, "", None, -1, {A0: (3, -1, ""), secret0: (8, -1, "")}
        )
        await begin_with_offsets(broker, {A0: 9, secret0: 9})
        both = {"a": [0], "secret": [0]}
        for version in (6, 7):
            assert await fetch(client, version, both) == (
                0,
                {("a", 0): (3, 0), ("secret", 0): (8, 0)},
            )

        r = await client.call(30, 1, {"creations": [_deny(ResourceType.TOPIC, "secret")]})
        assert r["results"][0]["error_code"] == 0
        denied = (-1, errors.TopicAuthorizationFailedError.errno)
        assert await fetch(client, 6, both) == (0, {("a", 0): (3, 0), ("secret", 0): denied})
        # a topic the principal may not describe answers TOPIC_AUTHORIZATION_FAILED, not UNSTABLE
        assert await fetch(client, 7, both, require_stable=True) == (
            0,
            {("a", 0): (-1, UNSTABLE), ("secret", 0): denied},
        )
        assert await fetch(client, 7, None, require_stable=True) == (0, {("a", 0): (-1, UNSTABLE)})

        r = await client.call(30, 1, {"creations": [_deny(ResourceType.GROUP, "g")]})
        assert r["results"][0]["error_code"] == 0
        group_denied = errors.GroupAuthorizationFailedError.errno
        for version in (6, 7):
            assert await fetch(client, version, None, require_stable=True) == (group_denied, {})
            assert await fetch(client, version, both, require_stable=True) == (group_denied, {})
        # v1 has no top-level error: each requested partition carries it
        assert await fetch(client, 1, {"a": [0]}) == (0, {("a", 0): (-1, group_denied)})
