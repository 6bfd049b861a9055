"""Topic config changes on a tiered topic with data in the bucket, as Kafka (3.9 / 4.x) handles
them: an in-process broker on a memory cold tier, its uploader driven one pass at a time."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tests.unit.cold.helpers import fill
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.partition import Partition
from tiered_mq.cold import layout
from tiered_mq.errors import InvalidConfigError
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)
TIERED = {"remote.storage.enable": "true", "retention.ms": "-1", "file.delete.delay.ms": "0"}


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    b = await start_broker(
        tmp_path,
        cold_url=f"memory://{uuid.uuid4().hex}/p",
        **{"remote.log.manager.task.interval.ms": "3600000"},  # passes run by the test
    )
    try:
        yield b
    finally:
        await b.close()


async def _pass(broker: Broker, tp: TopicPartition = TP) -> None:
    uploader = broker.remote_log_manager.uploader(tp)
    assert uploader is not None
    await uploader.stop()  # no background pass racing the explicit one
    await uploader.run_pass()


async def _tiered(broker: Broker, **configs: str) -> Partition:
    """``orders`` with 3 rolled segments (offsets 0-59), uploaded, only 40-59 kept locally."""
    props = {**TIERED, "local.retention.bytes": "1000", **configs}
    await broker.topic_registry.create_topic("orders", 1, props)
    partition = broker.replica_manager.get_partition(TP)
    async with partition.lock:
        fill(partition.log, 3)
        partition.high_watermark = partition.log.log_end_offset
    await _pass(broker)
    assert (partition.log.log_start_offset, partition.log.local_log_start_offset) == (0, 40)
    return partition


async def _segment_objects(broker: Broker) -> list[str]:
    rlm = broker.remote_log_manager
    objects = await rlm.store.list(layout.topic_prefix(rlm.prefix, "orders"))
    return [o.key for o in objects if o.key.endswith("." + layout.LOG)]


async def test_turning_remote_storage_off_needs_delete_on_disable(broker: Broker) -> None:
    partition = await _tiered(broker)
    registry = broker.topic_registry
    for overrides in ({"remote.storage.enable": "false"}, {}):  # set false, or drop the override
        with pytest.raises(InvalidConfigError, match=r"remote\.log\.delete\.on\.disable=true"):
            await registry.set_configs("orders", overrides, validate_only=False)
    assert partition.log.config.remote_storage_enable
    assert len(await _segment_objects(broker)) == 3
    assert await broker.remote_log_manager.read(TP, 0, 100)  # offset 0 stays readable

    # Kafka's way off: the remote log is deleted, the log start offset is the local one.
    await registry.set_configs(
        "orders",
        {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"},
        validate_only=False,
    )
    await _pass(broker)
    assert partition.log.log_start_offset == partition.log.local_log_start_offset == 40
    assert await _segment_objects(broker) == []
    uploader = broker.remote_log_manager.uploader(TP)
    assert uploader is not None and uploader.manifest.readable_segments() == []

    # On again: uploads start from the oldest local segment, nothing readable is lost.
    await registry.set_configs("orders", {**TIERED, "local.retention.bytes": "1000"}, False)
    for _ in range(2):
        await _pass(broker)
        assert partition.log.log_start_offset == 40
    assert uploader.manifest.remote_log_start_offset() == 40

    # A topic that never was tiered turns nothing off.
    await registry.create_topic("plain", 1, {})
    await registry.set_configs("plain", {"retention.ms": "1000"}, validate_only=False)


async def _topic_manifest_exists(broker: Broker, topic: str = "orders") -> bool:
    rlm = broker.remote_log_manager
    objects = await rlm.store.list(layout.topic_prefix(rlm.prefix, topic))
    return layout.topic_manifest_key(rlm.prefix, topic) in {o.key for o in objects}


async def test_topic_manifest_goes_with_the_remote_log(broker: Broker) -> None:
    """topic.json lets the bucket alone restore or replay a topic (DESIGN.md, section 3). When
    remote storage is turned off with remote.log.delete.on.disable (KIP-950), it goes once
    the last segment object of the topic is deleted, not before (a crash in between leaves
    it with its data), and comes back when remote storage is turned on again. Before, it
    stayed and went on advertising remote.storage.enable=true for a topic with no data."""
    await broker.topic_registry.create_topic(
        "orders", 2, {**TIERED, "local.retention.bytes": "1000"}
    )
    registry, rlm = broker.topic_registry, broker.remote_log_manager
    tps = [TopicPartition("orders", p) for p in (0, 1)]
    for tp in tps:
        partition = broker.replica_manager.get_partition(tp)
        async with partition.lock:
            fill(partition.log, 3)
            partition.high_watermark = partition.log.log_end_offset
        await _pass(broker, tp)
    assert len(await _segment_objects(broker)) == 6 and await _topic_manifest_exists(broker)

    off = {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"}
    await registry.set_configs("orders", off, validate_only=False)
    assert await _topic_manifest_exists(broker)  # the segments are still there
    await _pass(broker, tps[0])
    assert len(await _segment_objects(broker)) == 3 and await _topic_manifest_exists(broker)
    await _pass(broker, tps[1])  # the last partition's remote log goes: topic.json with it
    assert await _segment_objects(broker) == [] and not await _topic_manifest_exists(broker)
    manifest_keys = {layout.manifest_key(rlm.prefix, "orders", tp.partition) for tp in tps}
    remaining = {o.key for o in await rlm.store.list(layout.topic_prefix(rlm.prefix, "orders"))}
    assert remaining == manifest_keys  # the partition manifests stay (log start, epoch)

    # a topic.json left behind (a crash after the last deletion) goes at the next start
    await rlm.write_topic_manifest("orders", 2, registry.effective_configs("orders"))
    await _pass(broker, tps[0])  # reported once per disabling: no second removal
    assert await _topic_manifest_exists(broker)
    await registry.publish_topic_manifests()  # what Broker.start runs
    assert not await _topic_manifest_exists(broker)

    await registry.set_configs("orders", {**TIERED, "local.retention.bytes": "1000"}, False)
    assert await _topic_manifest_exists(broker)


async def test_remote_log_copy_disable_keeps_the_bucket_readable(broker: Broker) -> None:
    """KIP-950's read-only tier: no more copies, remote reads go on, and the local log is
    then kept by retention.ms/bytes (local.retention.* must be unset or the same)."""
    partition = await _tiered(broker)
    registry = broker.topic_registry
    tiered = TIERED
    with pytest.raises(InvalidConfigError, match=r"`local\.retention\.bytes` and `retention"):
        await registry.set_configs(
            "orders",
            {**tiered, "remote.log.copy.disable": "true", "local.retention.bytes": "1000"},
            validate_only=False,
        )
    read_only = {**tiered, "remote.log.copy.disable": "true"}
    await registry.set_configs("orders", read_only, validate_only=False)
    async with partition.lock:
        fill(partition.log, 2)  # 60-99, never uploaded
        partition.high_watermark = partition.log.log_end_offset
    await _pass(broker)
    uploader = broker.remote_log_manager.uploader(TP)
    assert uploader is not None and uploader.manifest.end_offset() == 59
    assert len(await _segment_objects(broker)) == 3
    assert await broker.remote_log_manager.read(TP, 0, 100)
    assert partition.log.local_log_start_offset == 40  # local.retention.bytes no longer applies

    # retention.bytes now deletes local segments that were never uploaded: the log start
    # offset follows them (Kafka's incrementStartOffset) and the older remote data goes too.
    await registry.set_configs("orders", {**read_only, "retention.bytes": "1000"}, False)
    for _ in range(2):
        await _pass(broker)
        assert partition.log.log_start_offset == partition.log.local_log_start_offset == 80
    assert await _segment_objects(broker) == []


def _copy_lag(broker: Broker) -> tuple[float | None, float | None]:
    """The partition's copy lag gauges (segments, bytes); None when not exported."""
    registry = broker.remote_log_manager.metrics.registry
    labels = {"topic": TP.topic, "partition": str(TP.partition)}
    return tuple(  # type: ignore[return-value]
        registry.get_sample_value(f"tiered_mq_remote_copy_lag_{what}", labels)
        for what in ("segments", "bytes")
    )


async def test_copy_lag_is_zero_while_copying_is_disabled(broker: Broker) -> None:
    """Kafka's RemoteLogManager cancels the copy task of a topic turned to
    remote.log.copy.disable=true and resets RemoteCopyLagBytes/Segments to 0 (resetLagStats):
    no segment waits for an upload by design. Before, the rolled segments kept counting."""
    partition = await _tiered(broker)
    async with partition.lock:
        fill(partition.log, 2)  # 60-99: rolled, above the high watermark, so not uploaded
    await _pass(broker)
    pending = sum(s.size for s in partition.log.segments()[-3:-1])
    assert _copy_lag(broker) == (2, pending)

    registry = broker.topic_registry
    await registry.set_configs("orders", {**TIERED, "remote.log.copy.disable": "true"}, False)
    await _pass(broker)
    assert _copy_lag(broker) == (0, 0)
    uploader = broker.remote_log_manager.uploader(TP)
    assert uploader is not None
    [status] = broker.remote_log_manager.status()
    assert (status.copy_lag_segments, status.copy_lag_bytes) == (0, 0)

    # copying again: the segments count until they are uploaded
    await registry.set_configs("orders", {**TIERED, "local.retention.bytes": "1000"}, False)
    await _pass(broker)
    assert _copy_lag(broker) == (2, pending)
    async with partition.lock:
        partition.high_watermark = partition.log.log_end_offset
    await _pass(broker)
    assert _copy_lag(broker) == (0, 0) and uploader.manifest.end_offset() == 99


async def test_a_compacted_topic_cannot_ask_for_remote_storage(broker: Broker) -> None:
    registry = broker.topic_registry
    both = {"cleanup.policy": "compact", "remote.storage.enable": "true"}
    with pytest.raises(InvalidConfigError, match="unsupported for the compacted topics"):
        await registry.create_topic("kv", 1, both)
    await registry.create_topic("kv", 1, {"cleanup.policy": "compact,delete"})
    with pytest.raises(InvalidConfigError, match="unsupported for the compacted topics"):
        await registry.set_configs("kv", {**both, "cleanup.policy": "compact,delete"}, False)


@pytest.mark.parametrize(
    "broker_configs",
    [{}, {"remote.log.storage.system.enable": "false"}],
    ids=["no cold URL", "system disabled"],
)
async def test_a_broker_without_a_cold_tier_refuses_remote_storage(
    tmp_path: Path, broker_configs: dict[str, str]
) -> None:
    """Kafka's validateRemoteStorageOnlyIfSystemEnabled: the topic would never be tiered."""
    url = f"memory://{uuid.uuid4().hex}/p" if broker_configs else None
    b = await start_broker(tmp_path, cold_url=url, **broker_configs)
    try:
        registry = b.topic_registry
        with pytest.raises(InvalidConfigError, match="Tiered Storage functionality is disabled"):
            await registry.create_topic("t", 1, {"remote.storage.enable": "true"})
        assert registry.get_topic("t") is None
        await registry.create_topic("t", 1, {"remote.storage.enable": "false"})
        with pytest.raises(InvalidConfigError, match="Tiered Storage functionality is disabled"):
            await registry.set_configs("t", {"remote.storage.enable": "true"}, False)
        assert not b.replica_manager.get_partition(
            TopicPartition("t", 0)
        ).log.config.remote_storage_enable
    finally:
        await b.close()


async def test_a_topic_tiered_by_the_broker_default_may_not_turn_compacted(tmp_path: Path) -> None:
    """No override of its own: the broker's ``remote.storage.enable=true`` tiers it. Turning it
    compacted is refused as Kafka refuses a tiered compacted topic, and nothing changes."""
    b = await start_broker(
        tmp_path,
        cold_url=f"memory://{uuid.uuid4().hex}/p",
        **{"remote.storage.enable": "true", "remote.log.manager.task.interval.ms": "3600000"},
    )
    try:
        await b.topic_registry.create_topic("orders", 1, {"retention.ms": "-1"})
        for change in ({"cleanup.policy": "compact"}, {"cleanup.policy": "compact,delete"}):
            with pytest.raises(InvalidConfigError, match="unsupported for the compacted topics"):
                await b.topic_registry.set_configs("orders", change, validate_only=False)
        partition = b.replica_manager.get_partition(TP)
        assert partition.log.config.remote_storage_enable and not partition.log.config.compact
        # turning remote storage off (deleting the remote data) with it is allowed
        off = {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"}
        await b.topic_registry.set_configs(
            "orders", {**off, "cleanup.policy": "compact"}, validate_only=False
        )
        assert partition.log.config.compact
    finally:
        await b.close()
