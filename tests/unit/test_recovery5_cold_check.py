"""The start's cold-URL check (cold_tier_record.check, a data dir recorded with another cold
URL) merges and parses each topic's config once, not once per partition directory (2,050
LogConfigs for 2,050 partition directories: the check took 60-150 ms, now 25-90 ms); the
refusal is the same."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.cold_tier_record import InconsistentRemoteStorageError
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.replica_manager import ReplicaManager
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

TOPICS, PARTITIONS = ("a", "b", "c"), 30


def broker(data_dir: Path, cold_url: str) -> Broker:
    config = BrokerConfig(
        data_dir, port=0, overrides={"offsets.topic.num.partitions": "1"}, cold_url=cold_url
    )
    return Broker(config)


async def test_the_moved_cold_url_check_parses_each_topic_config_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = broker(tmp_path, f"memory://{uuid.uuid4().hex}/p")
    await first.start()
    try:
        for name in TOPICS:
            await first.topic_registry.create_topic(
                name, PARTITIONS, {"remote.storage.enable": "true"}
            )
            for i in range(PARTITIONS):
                batch = encode_batch([(None, b"v", None, 1_000)])
                await first.replica_manager.append_internal(TopicPartition(name, i), batch)
    finally:
        await first.close()

    parsed: list[dict[str, str] | None] = []
    real = ReplicaManager.log_config

    def counted(self: ReplicaManager, overrides: dict[str, str] | None = None) -> LogConfig:
        parsed.append(overrides)
        return real(self, overrides)

    monkeypatch.setattr(ReplicaManager, "log_config", counted)
    moved = broker(tmp_path, f"memory://{uuid.uuid4().hex}/p")
    try:
        with pytest.raises(InconsistentRemoteStorageError) as refused:
            await moved.start()
    finally:
        await moved.close()
    assert f"{len(TOPICS) * PARTITIONS} tiered partition(s)" in str(refused.value)
    assert len(parsed) <= len(TOPICS) + 1  # (one for __consumer_offsets' directory)
