"""Helpers for the cleaner's unit tests: a log of keyed records and a fake partition."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tiered_mq.compaction.cleaner_manager import LogCleaner
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.record.batch import BatchHeader, iter_batches
from tiered_mq.record.records import Record, decode_batches, encode_batch
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("compacted", 0)


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(path: Path, clock: Clock, **props: str) -> LocalLog:
    base = {"cleanup.policy": "compact", "segment.bytes": "600", "file.delete.delay.ms": "0"}
    base.update({k.replace("_", "."): v for k, v in props.items()})
    return LocalLog.open(path, LogConfig.from_properties(base), clock=clock)


@dataclass
class FakePartition:
    log: LocalLog
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    high_watermark: int = -1

    def __post_init__(self) -> None:
        if self.high_watermark < 0:
            self.high_watermark = 1 << 62

    def replace_segments(self, old: Sequence[LogSegment], new_base: int) -> LogSegment:
        return self.log.replace_segments(old, new_base)


def append(
    log: LocalLog,
    records: list[tuple[bytes | None, bytes | None]],
    clock: Clock,
    **batch: int | bool,
) -> None:
    data = encode_batch([(k, v, [], clock.now) for k, v in records], **batch)  # type: ignore[arg-type]
    log.append_as_leader(bytearray(data), leader_epoch=0)


def read_records(log: LocalLog) -> list[Record]:
    out: list[Record] = []
    for header, records in read_batches(log):
        if not header.is_control:
            out.extend(records)
    return out


def read_batches(log: LocalLog) -> list[tuple[BatchHeader, list[Record]]]:
    offset, out = log.local_log_start_offset, bytearray()
    while offset < log.log_end_offset:  # through read(), segment by segment as a fetch would
        info = log.read(offset, 1 << 20)
        assert info.regions, f"nothing read at {offset}"
        chunk = b"".join(r.read() for r in info.regions)
        out += chunk
        offset = iter_batches(chunk)[-1][1].next_offset
    return list(decode_batches(bytes(out)))


def latest_per_key(pairs: list[tuple[int, bytes | None, bytes | None]]) -> dict[bytes, int]:
    latest: dict[bytes, int] = {}
    for offset, key, _ in pairs:
        if key is not None:
            latest[key] = offset
    return latest


def cleaner(log: LocalLog, clock: Clock, **kw: int) -> tuple[LogCleaner, FakePartition]:
    partition = FakePartition(log)
    c = LogCleaner(lambda: {TP: partition}, clock=clock, registry=None, **kw)
    return c, partition
