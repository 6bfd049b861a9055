"""The cleaner on transactional data: committed records compact, aborted ones go, markers stay
while their transaction has data and go after the delete horizon once it has none.

The log holds ``__consumer_offsets`` records (the case that matters: an aborted TxnOffsetCommit
must never come back, a committed one must never be lost), and the group coordinator's loader
reads it before and after cleaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tiered_mq.broker.group import log_format as fmt
from tiered_mq.broker.group.config import GroupConfig
from tiered_mq.broker.group.offsets import OffsetManager
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.compaction.txn_filter import AbortedTxns
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.transaction_index import AbortedTxn
from tiered_mq.record.batch import DELETE_HORIZON_FLAG
from tiered_mq.record.control import encode_control_batch
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

from .helpers import TP, Clock, FakePartition, open_log, read_batches

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@dataclass
class TxnPartition(FakePartition):
    aborted: list[AbortedTxn] | None = None

    def aborted_transactions(self, start: int, end: int) -> list[AbortedTxn]:
        return [e for e in self.aborted or [] if e.overlaps(start, end)]


class LogAsReplicaManager:
    """The group coordinator's storage seam over one real log (its partition is TP's number)."""

    def __init__(self, log: LocalLog) -> None:
        self.log = log

    async def ensure_internal_topic(self, name: str, n: int, configs: dict[str, str]) -> int:
        return n

    async def append_internal(self, tp: TopicPartition, records: bytes) -> int:
        raise AssertionError("read only")

    def local_log(self, tp: TopicPartition) -> LocalLog:
        return self.log


def commit(log: LocalLog, tp: TopicPartition, offset: int, pid: int = -1) -> int:
    key = fmt.encode_offset_key(fmt.OffsetKey("g", tp.topic, tp.partition))
    value = fmt.encode_offset_value(fmt.OffsetValue(offset, -1, "", 1))
    data = encode_batch(
        [(key, value, None, 1)], producer_id=pid, producer_epoch=0, is_transactional=pid >= 0
    )
    return int(log.append_as_leader(bytearray(data), 0).first_offset)


def marker(log: LocalLog, pid: int, commit: bool) -> int:
    data = encode_control_batch(pid, 0, commit, 0, 1)
    return int(log.append_as_leader(bytearray(data), 0).first_offset)


def loaded(log: LocalLog) -> tuple[dict[TopicPartition, int], set[TopicPartition]]:
    """(committed offsets of group g, partitions with pending txn offsets) as a load sees them."""
    manager = OffsetManager(LogAsReplicaManager(log), GroupConfig(offsets_topic_num_partitions=1))
    manager.load_partition(TopicPartition("__consumer_offsets", 0))
    committed = {tp: v.offset for tp, v in manager.fetch("g").items() if tp.topic == "t"}
    return committed, manager.pending.unstable("g")


async def test_aborted_txn_offsets_are_removed_and_committed_ones_compact(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    commit(log, T0, 5)
    commit(log, T1, 6)
    commit(log, T0, 10, pid=7)  # committed below: supersedes 5
    marker(log, 7, commit=True)
    first = commit(log, T0, 20, pid=8)  # aborted below: must not supersede 10
    commit(log, T1, 21, pid=8)
    last = marker(log, 8, commit=False)
    commit(log, T1, 30, pid=7)  # committed, then superseded by a later committed txn
    marker(log, 7, commit=True)
    commit(log, T1, 31, pid=9)
    marker(log, 9, commit=True)
    for i in range(40):  # roll segments past the records above
        commit(log, TopicPartition("filler", 0), i)
    assert loaded(log) == ({T0: 10, T1: 31}, set())
    partition = TxnPartition(log, aborted=[AbortedTxn(8, first, last, last + 1)])
    c = LogCleaner(lambda: {TP: partition}, clock=clock, registry=None)
    stats = await c.clean_partition(TP, partition)
    assert stats is not None
    assert loaded(log) == ({T0: 10, T1: 31}, set())
    batches = read_batches(log)
    values = [
        (h.producer_id, fmt.decode_offset_value(r.value or b"").offset)
        for h, records in batches
        if not h.is_control
        for r in records
        if fmt.decode_key(r.key or b"") != fmt.OffsetKey("g", "filler", 0)
    ]
    assert values == [(7, 10), (9, 31)]
    markers = [(h.producer_id, h.base_offset) for h, _ in batches if h.is_control]
    assert [pid for pid, _ in markers] == [7, 8, 7, 9]  # every marker is kept
    log.close()


async def test_markers_go_once_their_transaction_has_no_data_and_the_horizon_passed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, delete_retention_ms="1000")
    commit(log, T0, 10, pid=7)  # superseded by 30 below
    m1 = marker(log, 7, commit=True)
    first = commit(log, T0, 20, pid=8)  # aborted
    m2 = marker(log, 8, commit=False)
    commit(log, T0, 30, pid=7)
    m3 = marker(log, 7, commit=True)
    commit(log, T1, 40, pid=8)
    m4 = marker(log, 8, commit=True)
    for i in range(40):
        commit(log, TopicPartition("filler", 0), i)
    partition = TxnPartition(log, aborted=[AbortedTxn(8, first, m2, m2 + 1)])
    c = LogCleaner(lambda: {TP: partition}, clock=clock, registry=None)

    def markers() -> list[tuple[int, int, bool]]:
        return [
            (h.producer_id, h.base_offset, bool(h.attributes & DELETE_HORIZON_FLAG))
            for h, _ in read_batches(log)
            if h.is_control
        ]

    await c.clean_partition(TP, partition)  # the data go; their markers were read after them
    assert markers() == [(7, m1, False), (8, m2, False), (7, m3, False), (8, m4, False)]
    assert loaded(log) == ({T0: 30, T1: 40}, set())
    await c.clean_partition(TP, partition, force=True)  # empty: a horizon 1000 ms from now
    assert markers() == [(7, m1, True), (8, m2, True), (7, m3, False), (8, m4, False)]
    clock.now += 999
    await c.clean_partition(TP, partition, force=True)
    assert [offset for _, offset, _ in markers()] == [m1, m2, m3, m4]
    clock.now += 1
    await c.clean_partition(TP, partition, force=True)
    assert markers() == [(7, m3, False), (8, m4, False)]
    assert loaded(log) == ({T0: 30, T1: 40}, set())
    log.close()
    reopened = open_log(tmp_path / "t-0", clock)  # recovery reads the cleaned segments
    assert loaded(reopened) == ({T0: 30, T1: 40}, set())
    reopened.close()


async def test_without_an_aborted_index_transactional_records_are_kept(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock)
    commit(log, T0, 5)
    commit(log, T0, 20, pid=8)
    marker(log, 8, commit=False)
    for i in range(40):
        commit(log, TopicPartition("filler", 0), i)
    partition = FakePartition(log)  # no aborted_transactions(): outcome unknown
    c = LogCleaner(lambda: {TP: partition}, clock=clock, registry=None)
    await c.clean_partition(TP, partition)
    kept = [
        fmt.decode_offset_value(r.value or b"").offset
        for h, records in read_batches(log)
        if not h.is_control
        for r in records
        if fmt.decode_key(r.key or b"") == fmt.OffsetKey("g", "t", 0)
    ]
    assert kept == [5, 20]
    assert loaded(log) == ({T0: 5}, set())
    log.close()


def test_aborted_txns_lookup() -> None:
    aborted = AbortedTxns([AbortedTxn(1, 10, 15, 16), AbortedTxn(1, 30, 40, 41)])
    assert len(aborted) == 2
    assert [o for o in (9, 10, 15, 16, 29, 30, 40, 41) if aborted.is_aborted(1, o)] == [
        10,
        15,
        30,
        40,
    ]
    assert not aborted.is_aborted(2, 12)
