"""A log's open given up half way (``abandon`` set: a stop during the broker's start) leaves
the partition directory exactly as it was and no file open; the next open recovers it whole.
Before, nothing looked at a stop once a log's recovery scan or producer replay had begun."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from tests.unit.hot.helpers import make_batch, read_all
from tiered_mq.abandonable import AbandonedError
from tiered_mq.broker import partition as partition_module
from tiered_mq.broker.partition import Partition
from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

CONFIG = LogConfig.from_properties(
    {"segment.bytes": str(256 << 10), "index.interval.bytes": "4096"}
)
TP = TopicPartition("t", 0)


class SetAfter(threading.Event):
    """An event that reads as set from its ``calls``-th look on (a stop arriving mid-scan)."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls, self.looks = calls, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.calls or super().is_set()


def files_of(dir: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(dir.iterdir())}


def open_fds() -> set[str]:
    return {p.name for p in Path("/proc/self/fd").iterdir()}


def crashed_log(dir: Path, batches: int) -> bytes:
    """A log of ``batches`` batches (several segments), never closed, with a torn last batch
    and a recovery point checkpoint of 0 (as a power failure before any flush leaves it);
    returns its whole batches' bytes."""
    log = LocalLog.open(dir, CONFIG)
    for i in range(batches):
        log.append_as_leader(make_batch(20, seed=i, value_size=100), 1)
    data = read_all(log)
    for segment in log.segments():
        segment.close()
    active = log.segments()[-1].log_path
    with open(active, "ab") as out:
        out.write(bytes(make_batch(20, seed=7, value_size=100))[:-9])
    log_files.write_checkpoint(dir / log_files.RECOVERY_POINT_CHECKPOINT, 0)
    return data


def test_an_abandoned_recovery_scan_changes_nothing_and_the_next_open_recovers(
    tmp_path: Path,
) -> None:
    dir = tmp_path / "t-0"
    data = crashed_log(dir, 400)  # ~900 KiB in 4 segments: several reads per segment
    assert len(list(dir.glob("*.log"))) >= 3
    before, fds = files_of(dir), open_fds()
    abandon = SetAfter(6)  # within the second segment's scan
    with pytest.raises(AbandonedError):
        LocalLog.open(dir, CONFIG, abandon=abandon)
    assert abandon.looks == 6
    assert files_of(dir) == before  # no truncation, no index, no checkpoint written
    assert open_fds() == fds  # every segment opened was closed again

    log = LocalLog.open(dir, CONFIG)
    assert read_all(log) == data  # the torn batch truncated, every whole one kept
    log.close()


def test_a_set_abandon_stops_the_scan_of_a_single_large_segment(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    config = LogConfig.from_properties({"segment.bytes": str(64 << 20)})
    crashed = LocalLog.open(dir, config)
    for i in range(60):  # ~6 MiB in one segment: the scan reads it ~100 times
        crashed.append_as_leader(make_batch(1000, seed=i, value_size=100), 1)
    for segment in crashed.segments():
        segment.close()
    before = files_of(dir)
    abandon = SetAfter(3)
    with pytest.raises(AbandonedError):
        LocalLog.open(dir, config, abandon=abandon)
    assert abandon.looks == 3  # given up at its third read, not after the whole segment
    assert files_of(dir) == before


def test_an_abandoned_producer_replay_writes_no_snapshot_nor_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dir = tmp_path / "t-0"
    partition = Partition.open(TP, dir, CONFIG)
    for seq in range(0, 300, 3):  # an idempotent producer's batches, never flushed
        batch = bytearray(
            encode_batch(
                [(None, b"v", None, 1_000)] * 3,
                producer_id=7,
                producer_epoch=0,
                base_sequence=seq,
            )
        )
        partition.log.append_as_leader(batch, 0)
    for segment in partition.log.segments():  # a crash: no close, no snapshot
        segment.close()
    before, fds = files_of(dir), open_fds()

    abandon = threading.Event()
    real_replay = partition_module.replay
    looks = []

    def stop_during_replay(*args: object) -> None:
        abandon.set()  # the stop arrives once the log's recovery is done
        looks.append(True)
        real_replay(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(partition_module, "replay", stop_during_replay)
    with pytest.raises(AbandonedError):
        Partition.open(TP, dir, CONFIG, abandon=abandon)
    assert looks
    monkeypatch.undo()
    after = files_of(dir)
    # the scan rebuilt the indexes it had read whole (as a finished recovery does); the
    # checkpoints and producer snapshots, which the next open trusts, are as they were
    trusted = {
        name
        for name in before.keys() | after.keys()
        if name.endswith((log_files.SNAPSHOT_SUFFIX, "checkpoint"))
    }
    assert {n: after.get(n) for n in trusted} == {n: before.get(n) for n in trusted}
    assert open_fds() == fds

    reopened = Partition.open(TP, dir, CONFIG)
    assert reopened.log.log_end_offset == 300
    entry = reopened.producer_state.producers[7]
    assert entry.last_seq == 299
    reopened.close()
