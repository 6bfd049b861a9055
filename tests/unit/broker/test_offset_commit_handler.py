"""OffsetCommit (8) and TxnOffsetCommit (28) through the wire, against a real
``__consumer_offsets`` log whose ``segment.bytes`` (``offsets.topic.segment.bytes``) is 1 KiB:
a commit that does not fit is INVALID_COMMIT_OFFSET_SIZE, as in Kafka (it used to answer
COORDINATOR_NOT_AVAILABLE, and RECORD_LIST_TOO_LARGE for a transactional one), and metadata
longer than ``offset.metadata.max.bytes`` (4096) is OFFSET_METADATA_TOO_LARGE for its partition
alone. Neither stores anything for the partitions it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tiered_mq import errors
from tiered_mq.protocol.api_versions import ApiKey

TOO_LARGE = errors.InvalidCommitOffsetSizeError.errno
METADATA_TOO_LARGE = errors.OffsetMetadataTooLargeError.errno
SETTINGS = {**SMALL, "offsets.topic.segment.bytes": "1024"}
FITS, DOES_NOT_FIT, TOO_LONG = "m" * 100, "m" * 2000, "m" * 5000


def topics(metadata: dict[int, str], offset: int = 7) -> list[dict[str, Any]]:
    """Topic "a" with one entry per partition: ``{partition: metadata}``."""
    parts = [
        {"partition_index": p, "committed_offset": offset, "committed_metadata": m}
        for p, m in metadata.items()
    ]
    return [{"name": "a", "partitions": parts}]


def codes(response: dict[str, Any]) -> dict[int, int]:
    return {
        p["partition_index"]: p["error_code"] for t in response["topics"] for p in t["partitions"]
    }


async def committed(client: Client) -> dict[int, tuple[int, str | None]]:
    r = await client.call(
        ApiKey.OFFSET_FETCH,
        1,
        {"group_id": "g", "topics": [{"name": "a", "partition_indexes": [0, 1]}]},
    )
    parts = r["topics"][0]["partitions"]
    return {
        p["partition_index"]: (p["committed_offset"], p["metadata"])
        for p in parts
        if p["committed_offset"] >= 0
    }


async def test_offset_commit_too_large_for_the_offsets_topic(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SETTINGS) as (broker, client):
        await broker.topic_registry.create_topic("a", 2, {})
        body = {
            "group_id": "g",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": topics({0: DOES_NOT_FIT, 1: TOO_LONG}),
        }
        for version in (2, 7):
            r = await client.call(ApiKey.OFFSET_COMMIT, version, body)
            assert codes(r) == {0: TOO_LARGE, 1: METADATA_TOO_LARGE}
            assert await committed(client) == {}
        body["topics"] = topics({0: FITS, 1: TOO_LONG}, offset=5)
        r = await client.call(ApiKey.OFFSET_COMMIT, 7, body)
        assert codes(r) == {0: 0, 1: METADATA_TOO_LARGE}
        assert await committed(client) == {0: (5, FITS)}


async def test_txn_offset_commit_too_large_for_the_offsets_topic(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SETTINGS) as (broker, client):
        await broker.topic_registry.create_topic("a", 2, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_offsets("tx", pid, epoch, "g")
        body = {
            "transactional_id": "tx",
            "group_id": "g",
            "producer_id": pid,
            "producer_epoch": epoch,
            "topics": topics({0: DOES_NOT_FIT, 1: TOO_LONG}),
        }
        for version in (0, 3):
            r = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, body)
            assert codes(r) == {0: TOO_LARGE, 1: METADATA_TOO_LARGE}
        assert broker.group_coordinator is not None
        assert broker.group_coordinator.unstable_partitions("g") == set()
        body["topics"] = topics({0: FITS})
        assert codes(await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, body)) == {0: 0}
        await tc.end_txn("tx", pid, epoch, commit=True)
        assert await committed(client) == {0: (7, FITS)}
