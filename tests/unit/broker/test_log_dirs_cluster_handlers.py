"""DescribeLogDirs (35) and DescribeCluster (60) through an in-process broker, at every version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, Client, serving
from tests.unit.broker.test_produce_fetch import batch, produce_body
from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.broker.broker import Broker

PRODUCE, CREATE_TOPICS, METADATA, DESCRIBE_LOG_DIRS, DESCRIBE_CLUSTER = 0, 19, 3, 35, 60
CLUSTER_AUTHORIZATION_FAILED = 31
NOT_REQUESTED = -(2**31)


async def create(client: Client, name: str, partitions: int) -> None:
    topic = {"name": name, "num_partitions": partitions, "replication_factor": 1}
    r = await client.call(CREATE_TOPICS, 4, {"topics": [topic], "timeout_ms": 5000})
    assert r["topics"][0]["error_code"] == 0


def log_file_bytes(partition_dir: Path) -> int:
    return sum(p.stat().st_size for p in partition_dir.glob("*.log"))


def sizes(response: dict) -> dict[tuple[str, int], int]:  # type: ignore[type-arg]
    (result,) = response["results"]
    return {
        (t["name"], p["partition_index"]): p["partition_size"]
        for t in result["topics"]
        for p in t["partitions"]
    }


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_describe_log_dirs_reports_local_log_sizes(
    client: Client, broker: Broker, version: int
) -> None:
    await create(client, "sized", 2)
    await create(client, "empty", 1)
    for values in ([b"a" * 100, b"b"], [b"c" * 300]):
        r = await client.call(PRODUCE, 8, produce_body("sized", batch(values)))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0

    everything = await client.call(DESCRIBE_LOG_DIRS, version, {"topics": None})
    (result,) = everything["results"]
    data_dir = broker.config.data_dir
    assert result["error_code"] == 0 and result["log_dir"] == str(data_dir.absolute())
    got = sizes(everything)
    assert got[("sized", 0)] == log_file_bytes(data_dir / "sized-0") > 400
    assert got[("sized", 1)] == 0 and got[("empty", 0)] == 0
    assert ("__consumer_offsets", 0) in got  # internal topics are logs too
    for t in result["topics"]:
        assert all(p["offset_lag"] == 0 and not p["is_future_key"] for p in t["partitions"])
    if version >= 4:
        disk = shutil.disk_usage(data_dir)
        assert result["total_bytes"] == disk.total
        assert 0 < result["usable_bytes"] <= result["total_bytes"]
    else:
        assert result["total_bytes"] == result["usable_bytes"] == -1  # not on the wire

    # named partitions: unknown ones (and topics left with none) are left out
    wanted = [
        {"topic": "sized", "partitions": [0, 7]},
        {"topic": "nope", "partitions": [0]},
        {"topic": "empty", "partitions": []},
    ]
    some = await client.call(DESCRIBE_LOG_DIRS, version, {"topics": wanted})
    assert some["error_code"] == 0
    assert sizes(some) == {("sized", 0): got[("sized", 0)]}
    none = await client.call(DESCRIBE_LOG_DIRS, version, {"topics": []})
    assert sizes(none) == {}


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_describe_cluster_lists_this_broker(
    client: Client, broker: Broker, version: int
) -> None:
    r = await client.call(DESCRIBE_CLUSTER, version, {"include_cluster_authorized_operations": 0})
    meta = await client.call(METADATA, 8, {"topics": []})
    assert (r["error_code"], r["error_message"]) == (0, None)
    assert r["cluster_id"] == meta["cluster_id"] and r["cluster_id"]
    assert r["controller_id"] == meta["controller_id"] == broker.config.node_id
    (b,) = r["brokers"]
    assert (b["broker_id"], b["host"], b["port"]) == (
        broker.config.node_id,
        "127.0.0.1",
        broker.port,
    )
    assert b["rack"] is None and b["is_fenced"] is False
    assert r["cluster_authorized_operations"] == NOT_REQUESTED
    assert r["endpoint_type"] == 1

    asked = await client.call(
        DESCRIBE_CLUSTER, version, {"include_cluster_authorized_operations": True}
    )
    every = {"CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS"}
    every |= {"ALTER_CONFIGS", "IDEMPOTENT_WRITE"}
    assert asked["cluster_authorized_operations"] == sum(1 << AclOperation[n] for n in every)


@pytest.mark.parametrize("version", [1, 2])
async def test_describe_cluster_endpoint_types(client: Client, version: int) -> None:
    controllers = await client.call(DESCRIBE_CLUSTER, version, {"endpoint_type": 2})
    assert controllers["error_code"] == 114  # MISMATCHED_ENDPOINT_TYPE
    assert "type BROKER" in controllers["error_message"] and controllers["brokers"] == []
    unknown = await client.call(DESCRIBE_CLUSTER, version, {"endpoint_type": 7})
    assert unknown["error_code"] == 115  # UNSUPPORTED_ENDPOINT_TYPE
    assert unknown["error_message"] == "Unsupported endpoint type 7"


async def test_authorizer_needs_describe_on_the_cluster(tmp_path: Path) -> None:
    acls = {"authorizer.class.name": STANDARD_AUTHORIZER}
    async with serving(tmp_path / "acl", **acls) as (broker, client):
        refused = await client.call(DESCRIBE_LOG_DIRS, 3, {"topics": None})
        assert refused["error_code"] == CLUSTER_AUTHORIZATION_FAILED
        assert refused["results"] == []
        old = await client.call(DESCRIBE_LOG_DIRS, 1, {"topics": None})
        assert old["results"] == []  # v1-2 have no top-level error: just nothing
        ops = {"include_cluster_authorized_operations": True}
        assert (await client.call(DESCRIBE_CLUSTER, 0, ops))["cluster_authorized_operations"] == 0

        assert broker.authorizer is not None
        cluster = ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
        grant = AclBinding(cluster, ANONYMOUS, "*", AclOperation.ALTER, AclPermissionType.ALLOW)
        assert await broker.authorizer.create([grant]) == [None]

        allowed = await client.call(DESCRIBE_LOG_DIRS, 3, {"topics": None})
        assert allowed["error_code"] == 0 and len(allowed["results"]) == 1
        described = await client.call(DESCRIBE_CLUSTER, 0, ops)
        # ALTER implies DESCRIBE, nothing else
        expected = (1 << AclOperation.ALTER) | (1 << AclOperation.DESCRIBE)
        assert described["cluster_authorized_operations"] == expected
