"""Stray partition directories (a topic unknown, a partition it lacks, another topic id in
``partition.metadata``) are found and set aside ``-delete``; a directory from before topic ids
adopts the registered id; other entries of the data dir are never touched.

Before topic ids, a directory that a failed ``-delete`` rename left under its own name was
opened by the topic created again under that name, which served the old records as its own."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_produce_fetch import create
from tests.unit.broker.test_topic_deletion import (
    KAFKA_STORAGE_ERROR,
    delete_dirs,
    delete_topic,
    produce,
    values,
)
from tiered_mq.broker import stray_partitions as strays
from tiered_mq.coordination.base import TopicMetadata
from tiered_mq.hot import log_dir_deletion, partition_metadata
from tiered_mq.topic_partition import TopicPartition

OLD_ID, NEW_ID = uuid.uuid4().hex, uuid.uuid4().hex


def partition_dir(data: Path, name: str, topic_id: str | None) -> Path:
    dir = data / name
    dir.mkdir(parents=True)
    (dir / "00000000000000000000.log").write_bytes(b"old records")
    if topic_id is not None:
        partition_metadata.write(dir, topic_id)
    return dir


def test_partition_directory_names() -> None:
    assert strays.parse_partition_dir("orders-0") == TopicPartition("orders", 0)
    assert strays.parse_partition_dir("my-topic-12") == TopicPartition("my-topic", 12)
    assert strays.parse_partition_dir("__consumer_offsets-49") == TopicPartition(
        "__consumer_offsets", 49
    )
    for other in (
        "orders-0.0123456789abcdef0123456789abcdef-delete",
        "orders",
        "orders-",
        "orders-01",  # not the name of partition 1
        "-1",
        ".remote-cache",
        "cluster.json",
        "bad topic-0",
    ):
        assert strays.parse_partition_dir(other) is None, other


def test_strays_are_found_and_the_rest_is_left_alone(tmp_path: Path) -> None:
    registered = {"live": TopicMetadata("live", NEW_ID, 2)}
    partition_dir(tmp_path, "live-0", NEW_ID)
    partition_dir(tmp_path, "live-1", None)  # from before topic ids: adopts NEW_ID at open
    recreated = partition_dir(tmp_path, "live-2", OLD_ID)
    unknown = partition_dir(tmp_path, "gone-0", OLD_ID)
    unknown_unmarked = partition_dir(tmp_path, "gone-1", None)
    (tmp_path / "cluster.json").write_text("{}")
    (tmp_path / ".remote-cache").mkdir()
    (tmp_path / "x-0.0123456789abcdef0123456789abcdef-delete").mkdir()
    (tmp_path / "file-0").write_text("not a directory")

    found = strays.find_strays(tmp_path, registered.get)
    assert [(s.dir, s.reason) for s in found] == [
        (unknown, "topic 'gone' does not exist"),
        (unknown_unmarked, "topic 'gone' does not exist"),
        (recreated, "topic 'live' has 2 partition(s)"),
    ]
    registered["live"] = TopicMetadata("live", NEW_ID, 3)
    (mismatch,) = [s for s in strays.find_strays(tmp_path, registered.get) if s.dir == recreated]
    assert mismatch.reason == f"topic id {OLD_ID}, topic 'live' has id {NEW_ID}"

    registered["live"] = TopicMetadata("live", NEW_ID, 2)
    renamed = strays.set_aside(strays.find_strays(tmp_path, registered.get))
    assert [p.name.split(".")[0] for p in renamed] == ["gone-0", "gone-1", "live-2"]
    assert all(log_dir_deletion.is_delete_dir(p.name) and p.parent == tmp_path for p in renamed)
    assert all((p / "00000000000000000000.log").exists() for p in renamed)  # removed later
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith("-delete")) == [
        ".remote-cache",
        "cluster.json",
        "file-0",
        "live-0",
        "live-1",
    ]
    assert strays.find_strays(tmp_path, registered.get) == []


def test_strays_of_an_unidentified_data_dir_stop_the_start(tmp_path: Path) -> None:
    """No meta.properties yet: a stray is named in the error and nothing is changed."""
    registered = {"live": TopicMetadata("live", NEW_ID, 1)}
    strays.refuse_unidentified(strays.find_strays(tmp_path, registered.get))  # none: fine
    unknown = partition_dir(tmp_path, "gone-0", None)
    other_id = partition_dir(tmp_path, "live-0", OLD_ID)
    with pytest.raises(strays.StrayPartitionError, match="records no cluster id") as info:
        strays.refuse_unidentified(strays.find_strays(tmp_path, registered.get))
    assert f"{unknown} (topic 'gone' does not exist)" in str(info.value)
    assert str(other_id) in str(info.value)
    assert (unknown / "00000000000000000000.log").exists()
    assert partition_metadata.read(other_id) == OLD_ID
    assert not any(log_dir_deletion.is_delete_dir(p.name) for p in tmp_path.iterdir())


def test_a_corrupt_file_of_a_registered_topic_stops_the_scan(tmp_path: Path) -> None:
    dir = partition_dir(tmp_path, "live-0", None)
    (dir / "partition.metadata").write_text("version: 7\ntopic_id: x")
    registered = {"live": TopicMetadata("live", NEW_ID, 1)}
    corrupt = r"live-0/partition\.metadata: unrecognized version"
    with pytest.raises(partition_metadata.PartitionMetadataError, match=corrupt):
        strays.find_strays(tmp_path, registered.get)
    assert strays.find_strays(tmp_path, {}.get)[0].dir == dir  # its topic gone: a stray
    assert (dir / "00000000000000000000.log").exists()  # nothing deleted on a guess


def claim_dir(dir: Path, topic_id: str) -> Path | None:
    """Both steps for one directory, as the broker runs them: the stray set aside, if any."""
    claims = strays.claim_dirs([(dir, topic_id)])
    strays.record_claims(claims)
    return claims.strays[0] if claims.strays else None


def test_claiming_a_directory(tmp_path: Path) -> None:
    fresh = tmp_path / "t-0"
    assert claim_dir(fresh, NEW_ID) is None  # created, recording the id
    assert partition_metadata.read(fresh) == NEW_ID

    unmarked = partition_dir(tmp_path, "t-1", None)
    assert claim_dir(unmarked, NEW_ID) is None  # Kafka's upgrade path: adopted
    assert partition_metadata.read(unmarked) == NEW_ID
    assert (unmarked / "00000000000000000000.log").exists()

    other = partition_dir(tmp_path, "t-2", OLD_ID)
    aside = claim_dir(other, NEW_ID)
    assert aside is not None and log_dir_deletion.is_delete_dir(aside.name)
    assert partition_metadata.read(aside) == OLD_ID
    assert (aside / "00000000000000000000.log").exists()
    assert sorted(p.name for p in other.iterdir()) == ["partition.metadata"]  # starts empty
    assert partition_metadata.read(other) == NEW_ID


async def test_a_directory_a_failed_rename_left_is_never_the_new_topics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DeleteTopics answered KAFKA_STORAGE_ERROR (the rename failed, the metadata forgot the
    topic): the directory keeps its name and the old topic id; the topic created again under
    that name sets it aside and starts empty, without a restart."""
    data = tmp_path / "d"
    rename = log_dir_deletion.rename_for_deletion

    def fail(dir: Path) -> Path:
        raise OSError(5, "Input/output error", str(dir))

    async with serving(data) as (broker, client):
        await create(client, "t")
        await produce(client, "t", b"old-1", b"old-2")
        old_id = partition_metadata.read(data / "t-0")
        assert old_id == broker.coordinator.get_topic("t").topic_id
        monkeypatch.setattr(log_dir_deletion, "rename_for_deletion", fail)
        assert await delete_topic(client, "t") == KAFKA_STORAGE_ERROR
        monkeypatch.setattr(log_dir_deletion, "rename_for_deletion", rename)
        assert (data / "t-0").is_dir() and delete_dirs(data) == []

        await create(client, "t")
        await produce(client, "t", b"new-1")
        assert await values(client, "t") == [(0, b"new-1")]
        assert partition_metadata.read(data / "t-0") == broker.coordinator.get_topic("t").topic_id
        await broker.replica_manager.wait_for_dir_removals()
        assert delete_dirs(data) == []
