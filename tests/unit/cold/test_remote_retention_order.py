"""Remote retention moves the log start offset before it deletes objects, as Kafka's
RemoteLogManager does: while a victim's objects are being deleted, a read of it is out of range
(OFFSET_OUT_OF_RANGE for the fetch) and the log's start offset, which ListOffsets -2 answers,
is already past it. Before, both moved only after the last object had gone: a bug hunt's
fetches of segments being deleted answered KAFKA_STORAGE_ERROR (a .index no longer in the
bucket) and the earliest offset was one that could no longer be read. A read that found its
segment before the deletion and its objects gone after is out of range too."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.unit.cold.helpers import T0, Clock, fill, open_log
from tiered_mq.cold.local_stores import MemoryStore
from tiered_mq.cold.object_store import ThreadedStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.errors import OffsetOutOfRangeError
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("orders", 0)


class ProbingStore(ThreadedStore):
    """Runs ``probe`` once, at the first deletion of segment objects, before deleting them;
    ``before_get`` once, at the first GET of a key ending with ``get_suffix``, before it."""

    probe = None  # async callable, set by the test
    before_get = None
    get_suffix = ".index"

    async def get(self, key: str) -> tuple[bytes, str]:
        hook = self.before_get
        if hook is not None and key.endswith(self.get_suffix):
            self.before_get = None
            await hook()
        return await super().get(key)

    async def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        probe, self.probe = self.probe, None
        if probe is not None and any(k.endswith(".log") for k in keys):
            await probe(keys)
        await super().delete_many(keys)


async def test_the_log_start_offset_moves_before_the_objects_go(tmp_path: Path) -> None:
    clock = Clock(T0 + 100_000)
    log = open_log(tmp_path / "orders-0", clock=clock, retention_ms="-1")
    fill(log, 4)  # segments 0, 20, 40, 60, all rolled
    store = ProbingStore(MemoryStore.named(uuid.uuid4().hex), inline=True)
    rlm = RemoteLogManager(
        store,
        "p",
        tmp_path / "cache",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=clock,
    )
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()
    assert await rlm.read(TP, 5, 100)  # served from the bucket
    assert log.log_start_offset == 0

    seen: dict[str, object] = {}

    async def probe(keys: list[str]) -> None:
        seen["log_start_offset"] = log.log_start_offset
        seen["manifest_start"] = rlm.remote_log_start_offset(TP)
        with pytest.raises(OffsetOutOfRangeError):
            await rlm.read(TP, 5, 100)
        seen["read"] = "out of range"

    store.probe = probe
    # retention.ms: segments 0 and 20 (max timestamps T0 + 19 s and + 39 s) are past it
    log.update_config(log.config.__class__.from_properties({"retention.ms": "50000"}, log.config))
    uploader.config = log.config
    await uploader.run_pass()
    assert seen == {"log_start_offset": 40, "manifest_start": 40, "read": "out of range"}
    assert [s.base_offset for s in uploader.manifest.segments] == [40, 60]
    assert log.log_start_offset == 40
    await rlm.close()
    log.close()


async def test_a_read_whose_segment_is_deleted_under_it_is_out_of_range(tmp_path: Path) -> None:
    clock = Clock(T0 + 100_000)
    log = open_log(tmp_path / "orders-0", clock=clock, retention_ms="-1")
    fill(log, 4)
    store = ProbingStore(MemoryStore.named(uuid.uuid4().hex), inline=True)
    rlm = RemoteLogManager(
        store,
        "p",
        tmp_path / "cache",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=clock,
    )
    rlm.on_become_leader(TP, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(TP)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()

    async def retention_pass() -> None:  # between the read's manifest lookup and its GETs
        log.update_config(
            log.config.__class__.from_properties({"retention.ms": "50000"}, log.config)
        )
        uploader.config = log.config
        await uploader.run_pass()

    store.before_get = retention_pass
    with pytest.raises(OffsetOutOfRangeError):
        await rlm.read(TP, 5, 100)
    assert store.before_get is None  # the hook ran: the .index GET found no object
    assert log.log_start_offset == 40
    await rlm.close()
    log.close()
