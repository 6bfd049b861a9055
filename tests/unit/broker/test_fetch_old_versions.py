"""Fetch answers what an old version can carry, as Kafka's ``handleFetchRequest`` maps it:
below v10 a zstd topic's partitions answer UNSUPPORTED_COMPRESSION_TYPE with no records (the
fetcher may not read zstd, KIP-110), and up to v5 a storage error is NOT_LEADER_OR_FOLLOWER
(KAFKA_STORAGE_ERROR exists from v6; an older client would not retry it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, part, produce_body
from tiered_mq.errors import (
    KafkaStorageError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    UnsupportedCompressionTypeError,
)
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition

ZSTD = 4


async def _topic(client: Client, name: str, **configs: str) -> None:
    topic = {
        "name": name,
        "num_partitions": 1,
        "replication_factor": 1,
        "configs": [{"name": k, "value": v} for k, v in configs.items()],
    }
    r = await client.call(ApiKey.CREATE_TOPICS, 4, {"topics": [topic], "timeout_ms": 5000})
    assert r["topics"][0]["error_code"] == 0
    r = await client.call(PRODUCE, 8, produce_body(name, batch([b"a", b"b"])))
    assert part(r)["error_code"] == 0


async def _fetch(client: Client, version: int, topic: str, offset: int = 0) -> dict[str, Any]:
    r = await client.call(FETCH, version, fetch_body(topic, offset))
    return part(r, "responses", "partitions")


async def test_a_zstd_topic_is_refused_below_v10(client: Client) -> None:
    await _topic(client, "z", **{"compression.type": "zstd"})
    await _topic(client, "plain")
    for version in (4, 5, 9):
        p = await _fetch(client, version, "z")
        assert p["error_code"] == UnsupportedCompressionTypeError.errno, f"v{version}"
        assert p["high_watermark"] == -1 and bytes(p["records"]) == b""
        # whatever the read gave: an offset past the end too
        p = await _fetch(client, version, "z", offset=50)
        assert p["error_code"] == UnsupportedCompressionTypeError.errno, f"v{version}"
        p = await _fetch(client, version, "plain")  # other topics as usual
        assert p["error_code"] == 0 and p["high_watermark"] == 2
    for version in (10, 11):
        p = await _fetch(client, version, "z")
        assert p["error_code"] == 0 and p["high_watermark"] == 2
        batches = list(decode_batches(p["records"]))
        assert [h.compression for h, _ in batches] == [ZSTD]
        assert [r.value for _, rs in batches for r in rs] == [b"a", b"b"]
    p = await _fetch(client, 11, "z", offset=50)
    assert p["error_code"] == OffsetOutOfRangeError.errno


async def test_a_storage_error_is_not_leader_up_to_v5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_read(*args: Any, **kwargs: Any) -> Any:
        raise OSError(5, "Input/output error")

    async with serving(tmp_path / "d") as (broker, client):
        await _topic(client, "t")
        log = broker.replica_manager.partitions[TopicPartition("t", 0)].log
        monkeypatch.setattr(log, "read", failing_read)  # the disk fails under the segment
        for version in (4, 5):
            p = await _fetch(client, version, "t")
            assert p["error_code"] == NotLeaderOrFollowerError.errno, f"v{version}"
        for version in (6, 11):
            p = await _fetch(client, version, "t")
            assert p["error_code"] == KafkaStorageError.errno, f"v{version}"
