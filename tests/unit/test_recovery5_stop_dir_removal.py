"""A stop does not wait for the background removal of a deleted topic's directories: the one
being removed is finished, the others stay renamed ``-delete`` and the next start removes them.
The stop waited for every one of them (here 40 directories on a slow disk: 4 s)."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.hot import log_dir_deletion

PARTITIONS = 40
SLOW_S = 0.1  # each directory's removal, as on a slow or busy disk


def broker(data_dir: Path) -> Broker:
    config = BrokerConfig(
        data_dir,
        port=0,
        overrides={"offsets.topic.num.partitions": "1"},
        cold_url=f"memory://{uuid.uuid4().hex}/p",
    )
    return Broker(config)


def names(data_dir: Path) -> list[str]:
    return sorted(p.name for p in data_dir.iterdir())


def delete_dirs(data_dir: Path) -> list[str]:
    return [name for name in names(data_dir) if name.endswith("-delete")]


async def test_a_stop_leaves_the_deleted_directories_to_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = broker(tmp_path)
    await first.start()
    await first.topic_registry.create_topic("doomed", PARTITIONS, {})
    real_rmtree = shutil.rmtree

    def slow_rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        time.sleep(SLOW_S)
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(log_dir_deletion.shutil, "rmtree", slow_rmtree)
    await first.topic_registry.delete_topic("doomed")
    assert len(delete_dirs(tmp_path)) == PARTITIONS  # renamed, their removal under way
    stopping = time.monotonic()
    await first.close()
    took = time.monotonic() - stopping
    assert took < PARTITIONS * SLOW_S / 4, f"the stop took {took:.1f} s"
    left = delete_dirs(tmp_path)
    assert 0 < len(left) < PARTITIONS
    assert all(any((tmp_path / name).iterdir()) for name in left)  # each left whole
    monkeypatch.undo()

    second = broker(tmp_path)
    await second.start()
    try:
        await second.replica_manager.wait_for_dir_removals()
        assert delete_dirs(tmp_path) == []
        assert not any(name.startswith("doomed-") for name in names(tmp_path))
    finally:
        await second.close()
