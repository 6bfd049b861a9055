"""The partition count of ``__consumer_offsets`` is the topic's own once it exists, as in
Kafka: a coordinator configured with another ``offsets.topic.num.partitions`` still finds
every group where it was, its committed offsets and its membership."""

from __future__ import annotations

import dataclasses

from tests.unit.broker.group.conftest import CONFIG, Harness
from tests.unit.broker.group.fakes import FakeReplicaManager, FakeScheduler
from tests.unit.broker.group.test_membership import form_group
from tests.unit.broker.group.test_offset_delete import commit, offsets_of
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.coordinator import GroupCoordinator
from tiered_mq.broker.group.group import GroupState
from tiered_mq.topic_partition import TopicPartition

T0 = TopicPartition("t", 0)
GROUPS = [f"group-{i}" for i in range(12)]


async def test_a_changed_partition_count_setting_keeps_every_group_in_place() -> None:
    rm, clock = FakeReplicaManager(), FakeScheduler()
    h = Harness(rm, clock, GroupCoordinator(rm, CONFIG, clock))  # 4 partitions
    await h.coord.start()
    for i, group in enumerate(GROUPS):
        await commit(h, group, {T0: i})
    await form_group(h, 2)
    await h.coord.close()
    expected = {g: {T0: i} for i, g in enumerate(GROUPS)}
    for partitions in (3, 7):
        config = dataclasses.replace(CONFIG, offsets_topic_num_partitions=partitions)
        again = Harness(rm, clock, GroupCoordinator(rm, config, clock))
        await again.coord.start()
        assert {g: offsets_of(again, g) for g in GROUPS} == expected
        assert again.coord.groups["g"].state is GroupState.STABLE
        assert len(again.coord.groups["g"].members) == 2
        assert again.coord.partition_for("group-5") == fmt.partition_for("group-5", 4)
        await commit(again, "group-5", {T0: partitions})  # where the next start looks
        expected["group-5"] = {T0: partitions}
        await again.coord.close()
    last = Harness(rm, clock, GroupCoordinator(rm, CONFIG, clock))
    await last.coord.start()
    assert offsets_of(last, "group-5") == {T0: 7}
    assert rm.topics["__consumer_offsets"][0] == 4
    await last.coord.close()
