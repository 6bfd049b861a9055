"""``remote.storage.enable=false,remote.log.delete.on.disable=true`` raises the log start offset
to the local log start offset in the AlterConfigs call itself, checkpointed before it returns
(remote_disable.py, Kafka's TopicConfigHandler), not in the uploader's next pass; the bucket's
copies are still the pass's to delete. An in-process broker on a memory cold tier, the
uploader stopped so no pass runs."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.test_tiered_config_changes import (
    TP,
    _pass,
    _segment_objects,
    _tiered,
    broker,  # noqa: F401  (the fixture)
)
from tiered_mq.broker.broker import Broker
from tiered_mq.hot import log_files

OFF = {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"}


def checkpointed_log_start(b: Broker) -> int | None:
    directory = Path(b.replica_manager.get_partition(TP).log.dir)
    return log_files.read_checkpoint(directory / log_files.LOG_START_OFFSET_CHECKPOINT)


async def test_the_change_raises_the_log_start_durably_before_any_pass(
    broker: Broker,  # noqa: F811
) -> None:
    partition = await _tiered(broker)  # log start 0, local log start 40
    uploader = broker.remote_log_manager.uploader(TP)
    assert uploader is not None
    await uploader.stop()  # the pass is held (a slow bucket, a long upload)

    await broker.topic_registry.set_configs("orders", dict(OFF), validate_only=False)

    assert partition.log.log_start_offset == partition.log.local_log_start_offset == 40
    assert checkpointed_log_start(broker) == 40  # what a broker killed now restarts with
    assert len(await _segment_objects(broker)) == 3  # deleting them is the pass's work
    await _pass(broker)
    assert await _segment_objects(broker) == []
    assert partition.log.log_start_offset == 40


async def test_other_changes_leave_the_log_start(broker: Broker) -> None:  # noqa: F811
    partition = await _tiered(broker)
    uploader = broker.remote_log_manager.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    registry = broker.topic_registry
    tiered = {"remote.storage.enable": "true", "local.retention.bytes": "1000"}

    await registry.set_configs("orders", {**tiered, "retention.ms": "-1"}, validate_only=False)
    # delete.on.disable set while remote storage stays on: nothing is turned off
    await registry.set_configs(
        "orders", {**tiered, "remote.log.delete.on.disable": "true"}, validate_only=False
    )

    assert (partition.log.log_start_offset, partition.log.local_log_start_offset) == (0, 40)
    assert checkpointed_log_start(broker) == 0
