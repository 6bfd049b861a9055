"""Unit tests of broker/remote_tier.py: configs -> RemoteLogManager, tierable topics, the
startup check's refusal vs unreachable classification."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from botocore.exceptions import ClientError

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.remote_tier import (
    RemoteTierError,
    build_remote_log_manager,
    check_store,
    is_tierable,
    start_remote_tier,
    stop_remote_tier,
)
from tiered_mq.errors import ObjectStoreError
from tiered_mq.topic_partition import TopicPartition


def config(tmp_path: Path, **overrides: str) -> BrokerConfig:
    return BrokerConfig(tmp_path, cold_url="memory://unit-tier/prefix", overrides=overrides)


async def test_configs_reach_the_manager(tmp_path: Path) -> None:
    rlm = build_remote_log_manager(
        config(
            tmp_path,
            **{
                "remote.log.reader.cache.bytes": str(8 << 20),
                "remote.log.reader.chunk.bytes": str(1 << 20),
                "remote.log.manager.task.interval.ms": "250",
                "remote.log.manager.task.retry.backoff.max.ms": "2000",
            },
        )
    )
    assert rlm is not None
    assert rlm.prefix == "prefix"
    assert rlm.cache.max_bytes == 8 << 20 and rlm.cache.chunk_size == 1 << 20
    assert rlm._settings.check_interval_s == 0.25 and rlm._settings.retry_max_s == 2.0
    assert rlm.cache.dir == tmp_path / ".remote-cache"
    await stop_remote_tier(rlm)


async def test_system_switch_and_missing_url_turn_tiering_off(tmp_path: Path) -> None:
    off = config(tmp_path, **{"remote.log.storage.system.enable": "false"})
    assert await start_remote_tier(off) is None
    assert build_remote_log_manager(BrokerConfig(tmp_path)) is None
    assert "remote.log.storage.system.enable" in off.props  # a broker config, not a topic one
    assert "remote.log.storage.system.enable" not in off.topic_defaults


def test_internal_and_compacted_topics_are_not_tiered() -> None:
    def partition(policy: str) -> SimpleNamespace:
        return SimpleNamespace(log=SimpleNamespace(config=SimpleNamespace(cleanup_policy=policy)))

    assert is_tierable(TopicPartition("orders", 0), partition("delete"))
    assert not is_tierable(TopicPartition("__consumer_offsets", 3), partition("compact"))
    assert not is_tierable(TopicPartition("orders", 0), partition("compact,delete"))


class FailingStore:
    def __init__(self, error: ObjectStoreError) -> None:
        self.error = error

    async def list(self, prefix: str) -> list[object]:
        raise self.error


async def test_a_refusal_fails_the_start_and_unreachable_only_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused = ObjectStoreError("k", "bucket 'b' does not exist (NoSuchBucket)")
    refused.__cause__ = ClientError({"Error": {"Code": "NoSuchBucket"}}, "ListObjectsV2")
    with pytest.raises(RemoteTierError, match="does not exist"):
        await check_store(FailingStore(refused), "p", "s3://b/p")  # type: ignore[arg-type]
    away = ObjectStoreError("k", "cannot reach the S3 endpoint: refused")
    with caplog.at_level(logging.WARNING):
        await check_store(FailingStore(away), "p", "s3://b/p")  # type: ignore[arg-type]
    assert "unreachable at start" in caplog.text
