"""The cleaned ``.txnindex``: an aborted transaction is listed while its ABORT marker is kept for
its data (Kafka's CleanedTransactionMetadata), never once the cleaner removed its data and
marker; the partition's in-memory list follows each swap; an index that names a removed
marker (written by an older version) is repaired by the next pass; a crash mid-swap leaves the
old index or the rebuilt one.

The log is the one a Kafka Streams changelog gets: one transactional producer commits ``k1``,
aborts ``k2`` and commits ``k3``; a read_committed reader (the algorithm of Kafka's Fetcher and
librdkafka, :func:`read_committed`) must see ``k1`` and ``k3`` whatever the cleaner did.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

from tiered_mq.broker.partition import Partition, validate_records
from tiered_mq.compaction.cleaner import (
    CleanerStats,
    SegmentSource,
    build_offset_map,
    group_segments,
    plan_cleaning,
)
from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.compaction.offset_map import OffsetMap
from tiered_mq.compaction.segment_rewrite import CleanedGroup, clean_group, producer_last_batches
from tiered_mq.compaction.txn_filter import AbortedTxns, TxnMarkers
from tiered_mq.hot import log_files
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.transaction_index import AbortedTxn, TransactionIndex, decode_entries
from tiered_mq.record.control import ControlType, decode_control_record
from tiered_mq.record.records import encode_batch

from .helpers import TP, Clock, read_batches

PID = 7
RETENTION_MS = 1000
CONFIG = {
    "cleanup.policy": "compact",
    "segment.bytes": "600",
    "file.delete.delay.ms": "0",
    "delete.retention.ms": str(RETENTION_MS),
}
COMMITTED = {b"k1": b"committed-1", b"k3": b"committed-3"}


def open_partition(dir: Path) -> Partition:
    return Partition.open(TP, dir, LogConfig.from_properties(CONFIG))


async def produce(p: Partition, key: bytes, value: bytes, seq: int = -1) -> int:
    txn = seq >= 0
    buf = bytearray(
        encode_batch(
            [(key, value, (), 1000)],
            producer_id=PID if txn else -1,
            producer_epoch=0 if txn else -1,
            base_sequence=seq,
            is_transactional=txn,
        )
    )
    return (await p.append_as_leader(buf, validate_records(buf, 1 << 20))).base_offset


async def fill(p: Partition, tag: str, n: int = 30) -> None:
    """Plain records with keys of their own: segments roll past the transactions."""
    for i in range(n):
        await produce(p, f"{tag}{i:02d}".encode(), b"x" * 40)


@dataclass
class Changelog:
    partition: Partition
    aborted: AbortedTxn  # k2's transaction, as the partition indexed it
    cleaner: LogCleaner
    clock: Clock


async def changelog(dir: Path) -> Changelog:
    p = open_partition(dir)
    seq = itertools.count()
    for key, value, commit in [
        (b"k1", b"committed-1", True),
        (b"k2", b"aborted", False),
        (b"k3", b"committed-3", True),
    ]:
        await produce(p, key, value, next(seq))
        await p.append_txn_marker(PID, 0, commit=commit, coordinator_epoch=0)
    await fill(p, "a")
    [aborted] = p.aborted_transactions(0, p.log_end_offset)
    clock = Clock()
    return Changelog(p, aborted, LogCleaner(lambda: {TP: p}, registry=None, clock=clock), clock)


def read_committed(p: Partition) -> dict[bytes, bytes | None]:
    """What a read_committed consumer delivers from the log start: the transactional batches of
    a producer are dropped from the first offset of an aborted transaction the fetch lists
    (``aborted_transactions``) until that producer's ABORT marker."""
    start, end = p.log.local_log_start_offset, p.log_end_offset
    pending = sorted(p.aborted_transactions(start, end), key=lambda e: e.first_offset)
    aborting: set[int] = set()
    out: dict[bytes, bytes | None] = {}
    for header, records in read_batches(p.log):
        while pending and pending[0].first_offset <= header.last_offset:
            aborting.add(pending.pop(0).producer_id)
        if header.is_control:
            if records and decode_control_record(records[0]).type is ControlType.ABORT:
                aborting.discard(header.producer_id)
        elif not (header.is_transactional and header.producer_id in aborting):
            out.update((r.key, r.value) for r in records if r.key is not None)
    return out


def indexed(dir: Path) -> list[AbortedTxn]:
    """Every entry of the partition's ``.txnindex`` files, in segment order."""
    return [
        e
        for path in sorted(dir.glob(f"*{log_files.TXN_INDEX_SUFFIX}"))
        for e in decode_entries(path.read_bytes())
    ]


def markers(p: Partition) -> list[int]:
    return [h.base_offset for h, _ in read_batches(p.log) if h.is_control]


def committed_view(p: Partition) -> dict[bytes, bytes | None]:
    return {k: v for k, v in read_committed(p).items() if k.startswith(b"k")}


async def test_an_abort_is_indexed_while_its_marker_is_kept_for_its_data(tmp_path: Path) -> None:
    c = await changelog(tmp_path / "t-0")
    p, aborted = c.partition, c.aborted
    marker = aborted.last_offset
    assert indexed(p.log.dir) == [aborted]
    await c.cleaner.clean_partition(TP, p)  # k2 goes; its marker is read after it: kept
    assert marker in markers(p) and b"k2" not in read_committed(p)
    assert indexed(p.log.dir) == p.aborted_transactions(0, p.log_end_offset) == [aborted]
    await c.cleaner.clean_partition(TP, p, force=True)  # no data left: the entry goes now,
    assert marker in markers(p)  # the marker at its delete horizon
    assert indexed(p.log.dir) == p.aborted_transactions(0, p.log_end_offset) == []
    assert committed_view(p) == COMMITTED
    c.clock.now += RETENTION_MS
    await c.cleaner.clean_partition(TP, p, force=True)
    assert marker not in markers(p)
    assert indexed(p.log.dir) == p.aborted_transactions(0, p.log_end_offset) == []
    assert committed_view(p) == COMMITTED
    await c.cleaner.close()
    p.close()
    reopened = open_partition(tmp_path / "t-0")
    assert reopened.aborted_transactions(0, reopened.log_end_offset) == []
    assert committed_view(reopened) == COMMITTED
    reopened.close()


async def test_a_stale_entry_is_dropped_by_the_next_pass(tmp_path: Path) -> None:
    """The state an older cleaner left: the marker is gone, the index still names its
    transaction, and read_committed readers would lose ``k3``. Recovery drops the entry (it
    names no ABORT marker); left on disk, the next pass repairs the index even though no batch
    changes."""
    c = await changelog(tmp_path / "t-0")
    p, aborted = c.partition, c.aborted
    await c.cleaner.clean_partition(TP, p)
    await c.cleaner.clean_partition(TP, p, force=True)
    c.clock.now += RETENTION_MS
    await c.cleaner.clean_partition(TP, p, force=True)
    stats = await c.cleaner.clean_partition(TP, p, force=True)
    assert stats is not None and stats.segments_replaced == 0  # nothing left to change
    holder = max(s.base_offset for s in p.log.segments() if s.base_offset <= aborted.last_offset)
    TransactionIndex(p.log.dir, holder).append(aborted)
    p.close()
    p = open_partition(tmp_path / "t-0")
    assert indexed(p.log.dir) == p.aborted_transactions(0, p.log_end_offset) == []
    assert committed_view(p) == COMMITTED
    TransactionIndex(p.log.dir, holder).append(aborted)
    cleaner = LogCleaner(lambda: {TP: p}, registry=None, clock=c.clock)
    stats = await cleaner.clean_partition(TP, p, force=True)
    assert stats is not None and stats.segments_replaced == 1
    assert indexed(p.log.dir) == p.aborted_transactions(0, p.log_end_offset) == []
    assert committed_view(p) == COMMITTED
    await cleaner.close()
    await c.cleaner.close()
    p.close()


def rewrite_first_group(p: Partition, now: int) -> CleanedGroup:
    """Pass 1 and pass 2 of the group holding the aborted transaction, left as ``.swap`` files."""
    log = p.log
    plan = plan_cleaning(log, None, p.last_stable_offset, now, force=True)
    assert plan is not None
    sources = [SegmentSource.of(log, s) for s in plan.segments]
    try:
        aborted = AbortedTxns(p.aborted_transactions(0, plan.end_offset))
        omap = OffsetMap(1000)
        end = build_offset_map(sources, plan.first_dirty_offset, plan.end_offset, omap, 1 << 20)
        chosen = [s for s in sources if s.next_base <= end]
        group = group_segments(chosen, log.config)[0]
        last = producer_last_batches(chosen)
        stats = CleanerStats()
        cleaned = clean_group(
            log.dir, group, omap, last, log.config, now, stats, 1 << 20, aborted, TxnMarkers()
        )
    finally:
        for s in sources:
            s.close()
    assert cleaned is not None
    return cleaned


@pytest.mark.parametrize("renamed_old", [0, 1])
async def test_a_crash_mid_swap_keeps_the_rebuilt_index(tmp_path: Path, renamed_old: int) -> None:
    c = await changelog(tmp_path / "t-0")
    p, aborted = c.partition, c.aborted
    await c.cleaner.clean_partition(TP, p)  # k2's data go
    await c.cleaner.close()
    cleaned = rewrite_first_group(p, c.clock.now)  # its marker has no data: no entry
    assert cleaned.base_offset <= aborted.last_offset
    assert not [f for f in cleaned.files if f.name.endswith(log_files.TXN_INDEX_SUFFIX + ".swap")]
    for segment in cleaned.old[:renamed_old]:  # the crash, in replace_segments
        segment.rename_suffix(log_files.DELETED_SUFFIX)
    p.log.flush()
    for segment in p.log.segments():
        segment.close()
    reopened = open_partition(tmp_path / "t-0")
    assert not [n for n in reopened.log.dir.iterdir() if n.name.endswith((".swap", ".deleted"))]
    assert indexed(reopened.log.dir) == reopened.aborted_transactions(0, 1 << 62) == []
    assert committed_view(reopened) == COMMITTED
    reopened.close()


async def test_a_crash_before_the_swap_keeps_the_old_index(tmp_path: Path) -> None:
    c = await changelog(tmp_path / "t-0")
    p, aborted = c.partition, c.aborted
    await c.cleaner.clean_partition(TP, p)
    await c.cleaner.close()
    cleaned = rewrite_first_group(p, c.clock.now)
    for path in cleaned.files:  # still .cleaned when the process died
        path.rename(str(path)[: -len(log_files.SWAP_SUFFIX)] + log_files.CLEANED_SUFFIX)
    p.log.flush()
    for segment in p.log.segments():
        segment.close()
    reopened = open_partition(tmp_path / "t-0")
    assert indexed(reopened.log.dir) == reopened.aborted_transactions(0, 1 << 62) == [aborted]
    assert committed_view(reopened) == COMMITTED
    reopened.close()


def test_aborted_txns_by_marker() -> None:
    entry = AbortedTxn(PID, 3, 5, 6)
    aborted = AbortedTxns([entry, AbortedTxn(PID, 10, 12, 13)])
    assert aborted.ended_by(PID, 5) is entry
    assert aborted.ended_by(PID, 4) is None  # not a marker of an aborted transaction
    assert aborted.ended_by(8, 5) is None
