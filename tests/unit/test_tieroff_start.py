"""A broker started with tiered storage off refuses the start while topics are tiered (Kafka's
KAFKA-15267), in process: which topics count (tiering_off.tiered_topics), and that a topic whose
remote storage was turned off with ``remote.log.delete.on.disable=true`` lets the start go on."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tiered_mq.broker import meta_properties
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.tiering_off import TieredStorageDisabledError, check, tiered_topics
from tiered_mq.coordination.embedded import EmbeddedCoordinator
from tiered_mq.hot.log_config import LogConfig

KAFKA = "You have to delete all topics with the property remote.storage.enable=true"
OFF = {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"}


async def start(data_dir: Path, cold_url: str | None, **overrides: str) -> Broker:
    config = BrokerConfig(
        data_dir,
        port=0,
        overrides={"offsets.topic.num.partitions": "1", **overrides},
        cold_url=cold_url,
    )
    broker = Broker(config)
    try:
        await broker.start()
    except BaseException:
        await broker.close()
        raise
    return broker


async def test_tiering_off_is_refused_until_no_topic_is_tiered(tmp_path: Path) -> None:
    url = f"memory://{uuid.uuid4().hex}/p"
    b = await start(tmp_path, url)
    try:
        for name in ("a", "b"):
            await b.topic_registry.create_topic(name, 1, {"remote.storage.enable": "true"})
        await b.topic_registry.create_topic("plain", 1, {})
    finally:
        await b.close()
    recorded = meta_properties.read(tmp_path)

    with pytest.raises(TieredStorageDisabledError) as refused:
        await start(tmp_path, None)
    assert f"{KAFKA} before disabling tiered storage cluster-wide: 2 topic(s)" in str(refused.value)
    assert "(a, b)" in str(refused.value)
    assert f"the cold URL {url})" in str(refused.value)  # recorded by the first start
    assert meta_properties.read(tmp_path) == recorded

    # as the refusal says: turn it off with delete.on.disable (on a broker with a cold tier)
    b = await start(tmp_path, url)
    try:
        await b.topic_registry.set_configs("a", OFF, validate_only=False)
    finally:
        await b.close()
    with pytest.raises(TieredStorageDisabledError, match=r"1 topic\(s\) .* have it \(b\)"):
        await start(tmp_path, None, **{"remote.log.storage.system.enable": "false"})

    b = await start(tmp_path, url)
    try:
        await b.topic_registry.delete_topic("b")
    finally:
        await b.close()
    b = await start(tmp_path, None)  # nothing tiered is left: tiering off starts
    await b.close()


async def test_which_topics_count_as_tiered(tmp_path: Path) -> None:
    """The effective remote.storage.enable: a broker default tiers a topic without an
    override; internal and compacted topics are never tiered; a topic turned off is not."""
    defaults = {"remote.storage.enable": "true"}
    coordinator = EmbeddedCoordinator(tmp_path, 0)
    await coordinator.start()
    try:
        await coordinator.create_topic("by-default", 1, {}, [[0]])
        await coordinator.create_topic("own", 1, {"remote.storage.enable": "true"}, [[0]])
        await coordinator.create_topic("turned-off", 1, OFF, [[0]])
        await coordinator.create_topic("kv", 1, {"cleanup.policy": "compact"}, [[0]])
        await coordinator.create_topic("__consumer_offsets", 1, {}, [[0]])

        def merged(overrides: dict[str, str]) -> LogConfig:
            return LogConfig.from_properties({**defaults, **overrides})

        assert tiered_topics(coordinator, merged) == ["by-default", "own"]
        defaults.clear()
        assert tiered_topics(coordinator, merged) == ["own"]
    finally:
        await coordinator.close()


def test_the_refusal_names_a_few_topics_and_how_many(tmp_path: Path) -> None:
    topics = [f"t{i}" for i in range(7)]
    with pytest.raises(TieredStorageDisabledError) as refused:
        check(tmp_path, "zookeeper.connect=zk:2181/x", {}, topics, None)
    message = str(refused.value)
    assert "7 topic(s) in zookeeper.connect=zk:2181/x have it (t0, t1, t2, t3, t4, ...)" in message
    assert "and a cold URL)" in message
    check(tmp_path, "cluster.json", {"remote.storage.enable": "false"}, [], None)  # nothing to say


async def test_a_broker_default_tiering_every_topic_is_refused_with_tiering_off(
    tmp_path: Path,
) -> None:
    with pytest.raises(
        TieredStorageDisabledError, match="Tiered Storage functionality is disabled"
    ):
        await start(tmp_path, None, **{"remote.storage.enable": "true"})
    assert meta_properties.read(tmp_path) is None  # a fresh data dir stays unidentified
