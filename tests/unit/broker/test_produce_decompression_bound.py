"""Produce of a decompression bomb where the broker decodes records (a ``compression.type``
topic, a compacted topic): MESSAGE_TOO_LARGE, nothing appended, the broker keeps serving."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_produce_fetch import PRODUCE, batch, part, produce_body
from tests.unit.record.bombs import GiB, MiB, bomb_batch
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.replica_manager import ReplicaManager
from tiered_mq.compaction.validation import require_keys
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.compression import GZIP, LZ4, ZSTD, DecompressedTooLargeError

LIST_OFFSETS, CREATE_TOPICS = 2, 19
BOUND = 8 * MiB


@pytest.fixture
async def bounded(tmp_path: Path) -> AsyncIterator[tuple[Broker, Client]]:
    bound = {"message.max.decompressed.bytes": str(BOUND)}
    async with serving(tmp_path / "data", **bound) as pair:
        yield pair


async def _create(client: Client, topic: str, **configs: str) -> None:
    r = await client.call(
        CREATE_TOPICS,
        4,
        {
            "topics": [
                {
                    "name": topic,
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": k, "value": v} for k, v in configs.items()],
                }
            ],
            "timeout_ms": 5000,
        },
    )
    assert r["topics"][0]["error_code"] == 0


async def _latest(client: Client, topic: str) -> int:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    r = await client.call(LIST_OFFSETS, 5, body)
    return int(r["topics"][0]["partitions"][0]["offset"])


@pytest.mark.parametrize(
    ("configs", "codec"),
    [
        ({"compression.type": "lz4"}, ZSTD),
        ({"compression.type": "zstd"}, GZIP),
        ({"cleanup.policy": "compact"}, ZSTD),
        ({"cleanup.policy": "compact"}, LZ4),
    ],
    ids=["recompress-zstd-to-lz4", "recompress-gzip-to-zstd", "compact-zstd", "compact-lz4"],
)
async def test_bomb_refused_nothing_appended_then_serving(
    bounded: tuple[Broker, Client], configs: dict[str, str], codec: int
) -> None:
    broker, client = bounded
    await _create(client, "t", **configs)
    ok = batch([b"a"], compression=1)
    assert part(await client.call(PRODUCE, 8, produce_body("t", ok)))["error_code"] == 0
    # 1 GiB for zstd (32 KiB on the wire); lz4 and gzip bombs stay under max.message.bytes
    size = GiB if codec == ZSTD else 200 * MiB
    bomb = bomb_batch(codec, size, **({"gzip_level": 6} if codec == GZIP else {}))
    assert len(bomb) < 1_000_000
    p = part(await client.call(PRODUCE, 8, produce_body("t", bomb)))
    assert p["error_code"] == 10, p
    assert "message.max.decompressed.bytes" in p["error_message"]
    assert await _latest(client, "t") == 1  # nothing appended
    p = part(await client.call(PRODUCE, 8, produce_body("t", ok)))
    assert p["error_code"] == 0 and p["base_offset"] == 1
    assert broker.replica_manager.max_decompressed_bytes == BOUND


async def test_bomb_under_producer_compression_is_stored_untouched(
    bounded: tuple[Broker, Client],
) -> None:
    # compression.type=producer, not compacted: the hot path does per-batch work only and never
    # decodes records (handlers/produce.py), so the bound does not apply; consumers bound their
    # own decoding.
    _, client = bounded
    await _create(client, "plain")
    bomb = bomb_batch(ZSTD, 64 * MiB)
    assert part(await client.call(PRODUCE, 8, produce_body("plain", bomb)))["error_code"] == 0


def test_require_keys_passes_the_bound() -> None:
    bomb = bomb_batch(ZSTD, 4 * MiB)
    batches = iter_batches(bomb, validate=True)
    require_keys(bomb, batches, 8)  # under the default bound: it has a key
    with pytest.raises(DecompressedTooLargeError):
        require_keys(bomb, batches, 8, max_size=MiB)


def test_bad_bound_fails_the_broker_start(tmp_path: Path) -> None:
    config = BrokerConfig(tmp_path, overrides={"message.max.decompressed.bytes": "lots"})
    with pytest.raises(ValueError, match="lots"):
        ReplicaManager(config, coordinator=None)  # type: ignore[arg-type]
    assert BrokerConfig(tmp_path).get_int("message.max.decompressed.bytes") == 256 * MiB
