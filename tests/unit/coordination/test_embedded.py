"""EmbeddedCoordinator: durable JSON state, atomic rewrites, producer id blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiered_mq.coordination.base import BrokerInfo, PartitionState
from tiered_mq.coordination.embedded import FILE_NAME, EmbeddedCoordinator
from tiered_mq.errors import (
    InvalidPartitionsError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition


async def test_topics_survive_reopen(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.register_broker(BrokerInfo(0, "127.0.0.1", 9092))
    meta = await c.create_topic("t", 2, {"segment.bytes": "100000"}, [[0], [0]])
    with pytest.raises(TopicAlreadyExistsError):
        await c.create_topic("t", 1, {}, [])
    await c.add_partitions("t", 4, [[0], [0]])
    with pytest.raises(InvalidPartitionsError):
        await c.add_partitions("t", 3, [])
    await c.set_partition_state(TopicPartition("t", 1), PartitionState(0, 5, (0,), (0,)))
    await c.close()

    again = EmbeddedCoordinator(tmp_path)
    await again.start()
    got = again.get_topic("t")
    assert got is not None
    assert got.partitions == 4 and got.topic_id == meta.topic_id
    assert got.configs == {"segment.bytes": "100000"}
    state = again.partition_state(TopicPartition("t", 1))
    assert state is not None and state.leader_epoch == 5
    assert again.brokers() == [BrokerInfo(0, "127.0.0.1", 9092)]
    assert again.cluster_id == c.cluster_id
    await again.delete_topic("t")
    assert again.list_topics() == []
    assert again.partition_state(TopicPartition("t", 0)) is None
    with pytest.raises(UnknownTopicOrPartitionError):
        await again.delete_topic("t")


async def test_failed_change_leaves_state_untouched(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.create_topic("t", 1, {}, [])
    before = (tmp_path / FILE_NAME).read_bytes()
    with pytest.raises(TopicAlreadyExistsError):
        await c.create_topic("t", 1, {}, [])
    assert (tmp_path / FILE_NAME).read_bytes() == before
    assert not (tmp_path / (FILE_NAME + ".tmp")).exists()


async def test_producer_id_blocks_never_overlap_across_restarts(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    assert await c.allocate_producer_id_block(10) == (0, 10)
    assert await c.allocate_producer_id_block(10) == (10, 20)
    again = EmbeddedCoordinator(tmp_path)
    assert await again.allocate_producer_id_block(10) == (20, 30)


async def test_concurrent_creates_of_one_topic(tmp_path: Path) -> None:
    import asyncio

    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    results = await asyncio.gather(
        *(c.create_topic("race", 1, {}, []) for _ in range(5)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, TopicAlreadyExistsError) for r in results if isinstance(r, Exception))


async def test_dynamic_broker_configs_survive_reopen(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    assert c.broker_configs("<default>") == {}
    await c.set_broker_configs("<default>", {"log.retention.ms": "86400000"})
    await c.set_broker_configs("0", {"message.max.bytes": "2000000"})
    await c.close()
    again = EmbeddedCoordinator(tmp_path)
    await again.start()
    assert again.broker_configs("<default>") == {"log.retention.ms": "86400000"}
    assert again.broker_configs("0") == {"message.max.bytes": "2000000"}
    await again.set_broker_configs("0", {})  # the last config gone: the entity too
    assert "0" not in json.loads((tmp_path / FILE_NAME).read_text())["broker_configs"]
    assert again.broker_configs("0") == {}


async def test_a_file_from_before_broker_configs_reads_as_none(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    path = tmp_path / FILE_NAME
    state = json.loads(path.read_text())
    del state["broker_configs"]
    path.write_text(json.dumps(state))
    assert EmbeddedCoordinator(tmp_path).broker_configs("<default>") == {}
