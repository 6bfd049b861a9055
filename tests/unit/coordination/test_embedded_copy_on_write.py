"""EmbeddedCoordinator's copy on write and its entry-reusing encoder: a change that fails to
be written leaves the current view (and every view handed out before) as it was, whichever
entry it touched, and the file always holds exactly the current view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiered_mq.coordination.base import BrokerInfo, PartitionState
from tiered_mq.coordination.embedded import FILE_NAME, EmbeddedCoordinator
from tiered_mq.coordination.json_sections import SectionEncoder
from tiered_mq.topic_partition import TopicPartition

A = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"


def disk_full(_path: Path, _data: bytes) -> None:
    raise OSError(28, "No space left on device")


async def test_failed_writes_leave_every_entry_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.register_broker(BrokerInfo(0, "127.0.0.1", 9092))
    await c.create_topic("t", 2, {"retention.ms": "1000"}, [])
    await c.alter_scram_credentials({"alice": {"SCRAM-SHA-256": A}})
    await c.set_broker_configs("<default>", {"log.retention.ms": "5"})
    written = (tmp_path / FILE_NAME).read_bytes()

    monkeypatch.setattr("tiered_mq.coordination.embedded.replace_durably", disk_full)
    changes = [
        c.add_partitions("t", 5, []),
        c.set_topic_configs("t", {"retention.ms": "2000", "segment.ms": "10"}),
        c.alter_scram_credentials({"alice": {"SCRAM-SHA-512": A}}),
        c.alter_scram_credentials({"alice": {"SCRAM-SHA-256": None}}),
        c.set_broker_configs("<default>", {}),
        c.set_partition_state(TopicPartition("t", 0), PartitionState(0, 9, (0,), (0,))),
        c.delete_topic("t"),
    ]
    for change in changes:
        with pytest.raises(OSError):
            await change

    meta = c.get_topic("t")
    assert meta is not None and meta.partitions == 2
    assert meta.configs == {"retention.ms": "1000"}
    assert c.scram_credentials("alice") == {"SCRAM-SHA-256": A}
    assert c.broker_configs("<default>") == {"log.retention.ms": "5"}
    state = c.partition_state(TopicPartition("t", 0))
    assert state is not None and state.leader_epoch == 0
    assert (tmp_path / FILE_NAME).read_bytes() == written


async def test_the_file_follows_every_change(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.create_topic("a", 3, {}, [])
    await c.create_topic("b", 1, {}, [])
    await c.set_topic_configs("a", {"cleanup.policy": "compact"})
    await c.add_partitions("b", 2, [])
    await c.set_partition_state(TopicPartition("a", 2), PartitionState(0, 4, (0,), (0,)))
    await c.delete_topic("b")
    await c.alter_scram_credentials({"bob": {"SCRAM-SHA-256": A}})

    on_disk = json.loads((tmp_path / FILE_NAME).read_bytes())
    assert on_disk["topics"]["a"]["configs"] == {"cleanup.policy": "compact"}
    assert "b" not in on_disk["topics"] and "b-0" not in on_disk["partitions"]
    assert on_disk["partitions"]["a-2"]["leader_epoch"] == 4
    assert on_disk["users"] == {"bob": {"SCRAM-SHA-256": A}}
    reopened = EmbeddedCoordinator(tmp_path)
    assert reopened.list_topics() == ["a"]
    assert on_disk == reopened._state == c._state


def test_the_encoder_writes_each_documents_own_entries() -> None:
    encoder = SectionEncoder()
    first = {"v": 1, "s": {"x": {"n": 1}, "y": {"n": 2}}, "empty": {}}
    assert json.loads(encoder.encode(first)) == first
    second = {"v": 2, "s": {"x": first["s"]["x"], "y": {"n": 3}, "z": [1]}, "empty": {}}
    assert json.loads(encoder.encode(second)) == second
    third = {"v": 2, "s": {"z": [1]}, "empty": {"k": "v"}}
    assert json.loads(encoder.encode(third)) == third
