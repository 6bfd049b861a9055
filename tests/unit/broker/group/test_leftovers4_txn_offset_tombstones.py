"""Plain offset tombstones and pending transactional offsets, as Kafka's OffsetMetadataManager
treats them: DeleteGroups tombstones the pending-only partitions too, a tombstone drops the
pending offsets of its partition appended before it (live and when the log is replayed), and
expiration leaves a partition with a pending offset alone."""

from __future__ import annotations

from tests.unit.broker.group.conftest import CONFIG, Harness
from tests.unit.broker.group.test_txn_offsets import EPOCH, PID, T0, T1, committed, marker, value
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition


def _last_batch_keys(h: Harness, group: str) -> list[object]:
    tp = TopicPartition("__consumer_offsets", fmt.partition_for(group, 4))
    *_, (_, _, raw) = h.rm.logs[tp].batches
    ((_, records),) = list(decode_batches(raw))
    assert all(r.value is None for r in records)  # tombstones only
    return [fmt.decode_key(r.key or b"") for r in records]


async def test_delete_groups_tombstones_pending_only_partitions(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10), T1: value(20)})
    assert await h.coord.delete_groups(["g"]) == {"g": 0}
    assert _last_batch_keys(h, "g") == [
        fmt.OffsetKey("g", "t", 0),
        fmt.OffsetKey("g", "t", 1),
        fmt.GroupKey("g"),
    ]
    assert h.coord.unstable_partitions("g") == set()
    await marker(h, commit=True)
    assert committed(h) == {}
    h = await h.restart()
    assert committed(h) == {} and h.coord.unstable_partitions("g") == set()


async def test_an_offset_sent_after_the_deletion_stays(h: Harness) -> None:
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10)})
    assert await h.coord.delete_groups(["g"]) == {"g": 0}
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T1: value(30)})  # the group again
    await marker(h, commit=True)
    assert committed(h) == {T1: 30}
    h = await h.restart()
    assert committed(h) == {T1: 30}


async def test_offset_delete_drops_the_pending_offset_of_its_partitions(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, ""), T1: (6, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10), T1: value(20)})
    assert await h.coord.delete_offsets("g", [T0]) == (0, {T0: 0})
    assert h.coord.unstable_partitions("g") == {T1}
    await marker(h, commit=True)
    assert committed(h) == {T1: 20}
    h = await h.restart()
    assert committed(h) == {T1: 20}


async def test_expiration_skips_a_partition_with_a_pending_offset(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, ""), T1: (6, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10)})
    h.clock.advance(CONFIG.offsets_retention_ms + 1)
    await h.coord.expire_offsets()
    assert committed(h) == {T0: 5}  # T1 expired; T0 waits for its transaction
    await marker(h, commit=True)
    assert committed(h) == {T0: 10}
    h = await h.restart()
    assert committed(h) == {T0: 10}
