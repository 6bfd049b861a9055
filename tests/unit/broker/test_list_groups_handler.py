"""ListGroups (16) through the wire: states and types from v4/v5, both filters, ACLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import ACLS_ON, Client, serving
from tiered_mq.broker.acl.binding import AclOperation, AclPermissionType, ResourceType

NO_DELAY = {"group.initial.rebalance.delay.ms": "0"}


async def join(client: Client, group: str) -> dict[str, Any]:
    """JoinGroup v1 of one consumer: the group's only member, so its leader."""
    r = await client.call(
        11,
        1,
        {
            "group_id": group,
            "session_timeout_ms": 30_000,
            "rebalance_timeout_ms": 30_000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"\x00\x00"}],
        },
    )
    assert r["error_code"] == 0, r
    return r


async def groups(
    client: Client,
    version: int = 5,
    states: list[str] | None = None,
    types: list[str] | None = None,
) -> dict[str, tuple[str, str, str]]:
    body = {"states_filter": states or [], "types_filter": types or []}
    r = await client.call(16, version, body)
    assert r["error_code"] == 0
    return {
        g["group_id"]: (g["protocol_type"], g["group_state"], g["group_type"]) for g in r["groups"]
    }


async def sync(client: Client, group: str, member: dict[str, Any]) -> None:
    body = {
        "group_id": group,
        "generation_id": member["generation_id"],
        "member_id": member["member_id"],
        "assignments": [{"member_id": member["member_id"], "assignment": b""}],
    }
    assert (await client.call(14, 1, body))["error_code"] == 0


async def three_groups(client: Client) -> None:
    """``joined`` (CompletingRebalance: joined, not synced), ``stable`` (joined and synced)
    and ``gone`` (Empty: its one member joined, synced and left)."""
    await join(client, "joined")
    await sync(client, "stable", await join(client, "stable"))
    member = await join(client, "gone")
    await sync(client, "gone", member)
    left = await client.call(13, 1, {"group_id": "gone", "member_id": member["member_id"]})
    assert left["error_code"] == 0


EVERYTHING = {
    "joined": ("consumer", "CompletingRebalance", "classic"),
    "stable": ("consumer", "Stable", "classic"),
    "gone": ("consumer", "Empty", "classic"),
}


async def test_states_and_types_by_version(tmp_path: Path) -> None:
    async with serving(tmp_path / "data", **NO_DELAY) as (_, client):
        await three_groups(client)
        assert await groups(client) == EVERYTHING
        # v4: the state, no type; v0-3: neither (the fields take their defaults)
        assert await groups(client, 4) == {k: (p, s, "") for k, (p, s, _) in EVERYTHING.items()}
        for version in (0, 1, 2, 3):
            listed = await groups(client, version)
            assert listed == {k: (p, "", "") for k, (p, _, _) in EVERYTHING.items()}, version


async def test_filters(tmp_path: Path) -> None:
    async with serving(tmp_path / "data", **NO_DELAY) as (_, client):
        await three_groups(client)
        # states: Kafka's names, matched case-insensitively and stripped of blanks
        assert set(await groups(client, states=["Stable"])) == {"stable"}
        assert set(await groups(client, states=["stable"])) == {"stable"}
        assert set(await groups(client, states=[" EMPTY "])) == {"gone"}
        both = await groups(client, states=["completingrebalance", "STABLE"])
        assert set(both) == {"joined", "stable"}
        for nothing in ("Dead", "PreparingRebalance", "Unknown", "Stable2"):
            assert await groups(client, states=[nothing]) == {}, nothing
        # types: every group here is classic; naming only other types lists none
        for others in (["consumer"], ["share", "streams"], ["bogus"], [" classic"]):
            assert await groups(client, types=others) == {}, others  # type names: not stripped
        assert await groups(client, types=["Classic"]) == EVERYTHING
        assert await groups(client, types=["Consumer", "CLASSIC"]) == EVERYTHING
        # both: each must match
        assert set(await groups(client, states=["Stable"], types=["classic"])) == {"stable"}
        assert await groups(client, states=["Stable"], types=["consumer"]) == {}
        # v4 has no types filter (not on the wire): every type is listed
        assert set(await groups(client, 4, states=["stable"], types=["consumer"])) == {"stable"}
        # v0-3 have no filters at all
        assert set(await groups(client, 3, states=["stable"])) == set(EVERYTHING)


def _acl(kind: ResourceType, name: str, op: AclOperation) -> dict[str, Any]:
    return {
        "resource_type": kind,
        "resource_name": name,
        "resource_pattern_type": 3,
        "principal": "User:ANONYMOUS",
        "host": "*",
        "operation": op,
        "permission_type": AclPermissionType.DENY,
    }


async def test_acls_still_hide_groups_under_filters(tmp_path: Path) -> None:
    async with serving(tmp_path / "data", **NO_DELAY, **ACLS_ON) as (_, client):
        await three_groups(client)
        wanted = ["Stable", "CompletingRebalance"]
        assert set(await groups(client, states=wanted)) == {"joined", "stable"}
        # no DESCRIBE on the cluster: each group needs its own DESCRIBE, which "stable" lacks
        creations = [
            _acl(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE),
            _acl(ResourceType.GROUP, "stable", AclOperation.DESCRIBE),
        ]
        r = await client.call(30, 1, {"creations": creations})
        assert [c["error_code"] for c in r["results"]] == [0, 0]
        assert set(await groups(client, states=wanted)) == {"joined"}
        assert await groups(client, states=["Stable"]) == {}
        assert set(await groups(client, types=["classic"])) == {"joined", "gone"}
