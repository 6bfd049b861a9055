"""Transactional offset commits: durable pending offsets, markers, and the load path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.broker.group.conftest import CONFIG, Harness, settle
from tests.unit.broker.group.test_membership import form_group
from tiered_mq import errors
from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.group import GroupState
from tiered_mq.broker.producer_state import ProducerStateManager
from tiered_mq.record.batch import BatchHeader, read_header
from tiered_mq.record.control import encode_control_batch
from tiered_mq.record.records import decode_batches, encode_batch
from tiered_mq.topic_partition import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
PID, EPOCH = 4000, 3


def offsets_tp(group: str) -> TopicPartition:
    return TopicPartition("__consumer_offsets", fmt.partition_for(group, 4))


def value(offset: int) -> fmt.OffsetValue:
    return fmt.OffsetValue(offset, -1, "", 1)


def committed(h: Harness, group: str = "g") -> dict[TopicPartition, int]:
    error, found = h.coord.fetch_offsets(group, None)
    assert error == 0
    return {tp: v.offset for tp, v in found.items()}


async def marker(h: Harness, commit: bool, group: str = "g", pid: int = PID) -> None:
    """What the transaction coordinator does: append the marker, then settle the offsets."""
    tp = offsets_tp(group)
    await h.rm.append_internal(tp, encode_control_batch(pid, EPOCH, commit, 0, 1))
    h.coord.complete_txn(pid, commit, tp.partition)


def append_txn_records(h: Harness, group: str, offsets: dict[TopicPartition, int | None]) -> None:
    """A transactional batch as a Kafka broker would have written it (tombstones allowed)."""
    records = [
        (
            fmt.encode_offset_key(fmt.OffsetKey(group, tp.topic, tp.partition)),
            None if o is None else fmt.encode_offset_value(value(o)),
            None,
            1,
        )
        for tp, o in offsets.items()
    ]
    batch = encode_batch(records, producer_id=PID, producer_epoch=EPOCH, is_transactional=True)
    h.rm.logs[offsets_tp(group)].append(batch)


async def test_txn_offsets_are_appended_as_a_transactional_batch_and_held(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10), T1: value(20)})
    _, (_, _, raw) = h.rm.logs[offsets_tp("g")].batches
    ((header, records),) = list(decode_batches(raw))
    assert header.is_transactional and not header.is_control
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (PID, EPOCH, -1)
    assert [fmt.decode_offset_value(r.value or b"").offset for r in records] == [10, 20]
    assert committed(h) == {T0: 5}  # invisible until the marker
    assert h.coord.unstable_partitions("g") == {T0, T1}
    await marker(h, commit=True)
    assert committed(h) == {T0: 10, T1: 20}
    assert h.coord.unstable_partitions("g") == set()
    h = await h.restart()  # the marker in the log gives the same answer
    assert committed(h) == {T0: 10, T1: 20}


async def test_abort_drops_pending_offsets_live_and_on_load(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10)})
    await marker(h, commit=False)
    assert committed(h) == {T0: 5}
    assert h.coord.unstable_partitions("g") == set()
    h = await h.restart()
    assert committed(h) == {T0: 5}
    assert h.coord.unstable_partitions("g") == set()


async def test_load_holds_txn_offsets_until_their_marker(h: Harness) -> None:
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (5, -1, "")})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10), T1: value(11)})
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(12)})  # replaces 10
    # crash before the marker: the fresh coordinator holds them pending
    h = await h.restart()
    assert committed(h) == {T0: 5}
    assert h.coord.unstable_partitions("g") == {T0, T1}
    assert "g" in h.coord.groups
    # the transaction coordinator completes the transaction after the load
    await marker(h, commit=True)
    assert committed(h) == {T0: 12, T1: 11}
    h = await h.restart()
    assert committed(h) == {T0: 12, T1: 11}


async def test_load_commit_abort_and_tombstones_of_several_producers(h: Harness) -> None:
    append_txn_records(h, "g", {T0: 10, T1: 11})  # PID: committed below
    h.rm.logs[offsets_tp("g")].append(encode_control_batch(PID, EPOCH, True, 0, 1))
    append_txn_records(h, "g", {T0: 30})  # PID again: aborted below
    append_txn_records(h, "g", {T1: None})  # a transactional tombstone removes T1 from it
    h.rm.logs[offsets_tp("g")].append(encode_control_batch(PID, EPOCH, False, 0, 1))
    append_txn_records(h, "g", {T1: 40, T0: None})  # still open at the end of the log
    h = await h.restart()
    assert committed(h) == {T0: 10, T1: 11}
    assert h.coord.unstable_partitions("g") == {T1}
    await marker(h, commit=True)
    assert committed(h) == {T0: 10, T1: 40}


async def test_a_later_plain_commit_wins_over_an_earlier_txn_commit(h: Harness) -> None:
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10), T1: value(11)})
    await h.coord.commit_offsets("g", -1, "", None, -1, {T0: (50, -1, "")})
    await marker(h, commit=True)
    assert committed(h) == {T0: 50, T1: 11}  # Kafka: the txn offset is older than T0's
    h = await h.restart()
    assert committed(h) == {T0: 50, T1: 11}


async def test_a_marker_settles_only_the_groups_of_its_partition(h: Harness) -> None:
    other = next(g for g in (f"g{i}" for i in range(50)) if offsets_tp(g) != offsets_tp("g"))
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(1)})
    await h.coord.txn_offset_commit(other, PID, EPOCH, {T0: value(2)})
    await marker(h, commit=True, group="g")
    assert committed(h) == {T0: 1}
    assert committed(h, other) == {}
    h = await h.restart()
    assert committed(h) == {T0: 1}
    assert h.coord.unstable_partitions(other) == {T0}
    await marker(h, commit=True, group=other)
    assert committed(h, other) == {T0: 2}


async def test_a_group_with_pending_offsets_is_not_expired(h: Harness) -> None:
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(1)})
    h.clock.advance(CONFIG.offsets_retention_ms + 1)
    await h.coord.expire_offsets()
    assert h.coord.groups["g"].state is GroupState.EMPTY
    await marker(h, commit=True)
    assert committed(h) == {T0: 1}


async def test_txn_offset_commit_errors(h: Harness) -> None:
    with pytest.raises(errors.InvalidGroupIdError):
        await h.coord.txn_offset_commit("", PID, EPOCH, {T0: value(1)})
    h.rm.fail_appends = True  # a storage error: Kafka answers NOT_COORDINATOR
    with pytest.raises(errors.NotCoordinatorError):
        await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(1)})
    assert h.coord.unstable_partitions("g") == set()


async def test_txn_offsets_too_large_for_the_offsets_topic(h: Harness) -> None:
    """RECORD_LIST_TOO_LARGE / MESSAGE_TOO_LARGE of the append are INVALID_COMMIT_OFFSET_SIZE
    (Kafka's GroupMetadataManager); they used to reach the client as they were."""
    for error in (errors.RecordListTooLargeError(), errors.MessageTooLargeError()):
        h.rm.append_error = error
        with pytest.raises(errors.InvalidCommitOffsetSizeError):
            await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(1)})
        assert h.coord.unstable_partitions("g") == set()
    h.rm.append_error = errors.InvalidProducerEpochError()  # other Kafka errors pass through
    with pytest.raises(errors.InvalidProducerEpochError):
        await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(1)})


def test_coordinator_batches_without_sequence_pass_an_epoch_bump(tmp_path: Path) -> None:
    """A new producer epoch's TxnOffsetCommit batch has no sequence: only the epoch is checked."""
    ps = ProducerStateManager(tmp_path)

    def header(epoch: int) -> BatchHeader:
        return read_header(
            encode_batch([(b"k", b"v", None, 1)], producer_id=PID, producer_epoch=epoch)
        )

    ps.update(header(1), 0)
    assert ps.check(header(2)) is None
    with pytest.raises(errors.InvalidProducerEpochError):
        ps.check(header(0))


async def test_txn_offset_commit_checks_the_named_member(h: Harness) -> None:
    """TxnOffsetCommit v3+ names the consumer (Java's sendOffsetsToTransaction with
    ``consumer.groupMetadata()``): as in Kafka, only a current member of the current
    generation commits; a request that names no member (v0-2) is not checked."""
    joins = await form_group(h, 2)
    me, generation = joins[0]["member_id"], joins[0]["generation_id"]
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(10)}, generation, me)
    with pytest.raises(errors.IllegalGenerationError):
        await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(11)}, generation - 1, me)
    with pytest.raises(errors.UnknownMemberIdError):
        await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(12)}, generation, "zombie")
    with pytest.raises(errors.UnknownMemberIdError):  # an instance id the group does not know
        await h.coord.txn_offset_commit("g", PID, EPOCH, {T0: value(13)}, generation, me, "i-9")
    with pytest.raises(errors.IllegalGenerationError):  # a group the coordinator does not know
        await h.coord.txn_offset_commit("other", PID, EPOCH, {T0: value(14)}, 0, me)
    await h.coord.txn_offset_commit("g", PID, EPOCH, {T1: value(15)})  # v0-2: no member
    await marker(h, commit=True)
    assert committed(h) == {T0: 10, T1: 15}


async def test_txn_offset_commit_fences_a_replaced_static_member(h: Harness) -> None:
    first = await h.start_join(instance_id="i-1")
    h.clock.advance(300)  # the initial rebalance delay
    await settle()
    old = first.result()
    second = await h.start_join(instance_id="i-1")  # a new instance replaces it
    new = second.result()
    generation = h.coord.groups["g"].generation_id
    with pytest.raises(errors.FencedInstanceIdError):
        await h.coord.txn_offset_commit(
            "g", PID, EPOCH, {T0: value(1)}, generation, old["member_id"], "i-1"
        )
    await h.coord.txn_offset_commit(
        "g", PID, EPOCH, {T0: value(2)}, generation, new["member_id"], "i-1"
    )


async def test_txn_offset_commit_to_an_unknown_group_is_illegal_generation(h: Harness) -> None:
    """Kafka's validateTransactionalOffsetCommit: an unknown group with a generation is
    ILLEGAL_GENERATION and is not created; generation -1 creates a simple group."""
    with pytest.raises(errors.IllegalGenerationError):
        await h.coord.txn_offset_commit("other", PID, EPOCH, {T0: value(1)}, 0, "m")
    assert "other" not in h.coord.groups
    await h.coord.txn_offset_commit("other", PID, EPOCH, {T0: value(2)}, -1, "m")
    assert h.coord.groups["other"].state is GroupState.EMPTY
    await marker(h, commit=True, group="other")
    assert committed(h, "other") == {T0: 2}
