"""EmbeddedCoordinator.create_topics / delete_topics: the topics of one CreateTopics or
DeleteTopics request in one durable write of cluster.json, each topic answered on its own, and
a failed write leaving nothing of the batch, in memory or on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiered_mq.coordination import embedded
from tiered_mq.coordination.base import BrokerInfo, NewTopic, TopicMetadata
from tiered_mq.coordination.embedded import FILE_NAME, EmbeddedCoordinator
from tiered_mq.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError
from tiered_mq.topic_partition import TopicPartition


class CountingWrites:
    """Counts the durable rewrites of cluster.json (wraps the real one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = embedded.replace_durably

        def counted(path: Path, data: bytes) -> None:
            self.count += 1
            real(path, data)

        monkeypatch.setattr(embedded, "replace_durably", counted)


async def started(tmp_path: Path) -> EmbeddedCoordinator:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.register_broker(BrokerInfo(0, "127.0.0.1", 9092))
    return c


def on_disk(tmp_path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((tmp_path / FILE_NAME).read_bytes())
    return data


async def test_a_batch_is_one_write_and_each_topic_answers_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = await started(tmp_path)
    old = await c.create_topic("old", 1, {}, [[0]])
    writes = CountingWrites(monkeypatch)
    batch = [NewTopic(f"t{i}", 4, {"retention.ms": str(i)}, [[0]] * 4) for i in range(50)]
    results = await c.create_topics([*batch, NewTopic("old", 3, {}, [])])
    assert writes.count == 1
    assert isinstance(results["old"], TopicAlreadyExistsError)
    assert c.get_topic("old") == old  # untouched
    for topic in batch:
        meta = results[topic.name]
        assert isinstance(meta, TopicMetadata)
        assert meta == c.get_topic(topic.name)
        assert meta.partitions == 4 and meta.configs == topic.configs
        assert c.partition_state(TopicPartition(topic.name, 3)) is not None
    ids = {m.topic_id for m in results.values() if isinstance(m, TopicMetadata)}
    assert len(ids) == 50

    again = EmbeddedCoordinator(tmp_path)  # what the write left on disk
    assert again.list_topics() == sorted(["old", *(t.name for t in batch)])
    assert again.get_topic("t7") == results["t7"]


async def test_a_batch_of_existing_topics_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = await started(tmp_path)
    await c.create_topics([NewTopic("a", 1, {}, []), NewTopic("b", 1, {}, [])])
    before = (tmp_path / FILE_NAME).read_bytes()
    writes = CountingWrites(monkeypatch)
    results = await c.create_topics([NewTopic("a", 2, {}, []), NewTopic("b", 2, {}, [])])
    assert all(isinstance(r, TopicAlreadyExistsError) for r in results.values())
    gone = await c.delete_topics(["x", "y"])
    assert all(isinstance(e, UnknownTopicOrPartitionError) for e in gone.values())
    assert writes.count == 0
    assert (tmp_path / FILE_NAME).read_bytes() == before


async def test_a_failed_write_leaves_nothing_of_the_batch(tmp_path: Path) -> None:
    c = await started(tmp_path)
    await c.create_topic("kept", 2, {}, [])
    before = (tmp_path / FILE_NAME).read_bytes()
    (tmp_path / (FILE_NAME + ".tmp")).mkdir()  # the write cannot open its temporary file
    with pytest.raises(OSError):
        await c.create_topics([NewTopic(f"t{i}", 2, {}, []) for i in range(5)])
    assert c.list_topics() == ["kept"]
    assert c.get_topic("t0") is None
    assert c.partition_state(TopicPartition("t0", 0)) is None
    with pytest.raises(OSError):
        await c.delete_topics(["kept"])
    assert c.list_topics() == ["kept"]
    assert c.partition_state(TopicPartition("kept", 1)) is not None
    assert (tmp_path / FILE_NAME).read_bytes() == before

    (tmp_path / (FILE_NAME + ".tmp")).rmdir()  # the fault gone, the same batch goes through
    results = await c.create_topics([NewTopic(f"t{i}", 2, {}, []) for i in range(5)])
    assert all(isinstance(r, TopicMetadata) for r in results.values())


async def test_delete_topics_is_one_write_and_each_topic_answers_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = await started(tmp_path)
    await c.create_topics([NewTopic(f"t{i}", 3, {}, []) for i in range(20)])
    writes = CountingWrites(monkeypatch)
    names = [f"t{i}" for i in range(0, 20, 2)]
    results = await c.delete_topics([*names, "missing"])
    assert writes.count == 1
    assert isinstance(results["missing"], UnknownTopicOrPartitionError)
    assert all(results[n] is None for n in names)
    assert c.list_topics() == sorted(f"t{i}" for i in range(1, 20, 2))
    assert c.partition_state(TopicPartition("t0", 0)) is None
    assert c.partition_state(TopicPartition("t1", 2)) is not None
    topics = on_disk(tmp_path)["topics"]
    partitions = on_disk(tmp_path)["partitions"]
    assert isinstance(topics, dict) and isinstance(partitions, dict)
    assert sorted(topics) == c.list_topics()
    assert not [p for p in partitions if p.startswith("t0-")]
