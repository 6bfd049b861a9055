"""A deleted topic's committed offsets are found through the per-topic index of the offsets
cache (OffsetManager.topic_offsets), not by a scan of every group's offsets: the index must
follow every way an offset comes and goes (commit, OffsetDelete, DeleteGroups, a reload of
``__consumer_offsets``, topic deletion)."""

from __future__ import annotations

from tests.unit.broker.group.conftest import Harness
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.topic_partition import TopicPartition

GROUPS = ("a", "b", "c", "d")


def scanned(coord: GroupCoordinator, topic: str) -> dict[str, list[TopicPartition]]:
    """What the index must say, from every group's committed offsets."""
    found = {}
    for group in GROUPS:
        _, committed = coord.fetch_offsets(group, None)
        mine = sorted(tp for tp in committed if tp.topic == topic)
        if mine:
            found[group] = mine
    return found


def indexed(coord: GroupCoordinator, topic: str) -> dict[str, list[TopicPartition]]:
    return {g: sorted(tps) for g, tps in coord.offsets.topic_offsets(topic).items()}


def x(p: int) -> TopicPartition:
    return TopicPartition("x", p)


def y(p: int) -> TopicPartition:
    return TopicPartition("y", p)


async def test_the_index_follows_every_change(h: Harness) -> None:
    commit = h.coord.commit_offsets
    await commit("a", -1, "", None, -1, {x(0): (1, -1, ""), x(1): (1, -1, ""), y(0): (1, -1, "")})
    await commit("b", -1, "", None, -1, {y(0): (2, -1, "")})
    await commit("c", -1, "", None, -1, {x(2): (3, -1, "")})
    await commit("d", -1, "", None, -1, {x(0): (4, -1, "")})
    await commit("a", -1, "", None, -1, {x(0): (5, -1, "")})  # again: still one partition
    assert (
        indexed(h.coord, "x")
        == scanned(h.coord, "x")
        == {
            "a": [x(0), x(1)],
            "c": [x(2)],
            "d": [x(0)],
        }
    )

    assert await h.coord.delete_offsets("a", [x(1)]) == (0, {x(1): 0})
    assert await h.coord.delete_groups(["c"]) == {"c": 0}
    for topic in ("x", "y"):
        assert indexed(h.coord, topic) == scanned(h.coord, topic)
    assert indexed(h.coord, "x") == {"a": [x(0)], "d": [x(0)]}

    h = await h.restart()  # the cache is loaded again from __consumer_offsets
    for topic in ("x", "y"):
        assert indexed(h.coord, topic) == scanned(h.coord, topic)

    await h.coord.on_topic_deleted("x")
    assert indexed(h.coord, "x") == scanned(h.coord, "x") == {}
    assert indexed(h.coord, "y") == scanned(h.coord, "y") == {"a": [y(0)], "b": [y(0)]}
    assert h.coord.describe_group("d")["group_state"] == "Dead"  # left without offsets
    await h.coord.close()
