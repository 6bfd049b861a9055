"""A segment below the recovery point (trusted: not scanned at open) whose tail was torn on
disk, in the middle of a batch or of its header. A read used to send the torn bytes followed
by the next segment's batches (a consumer decoded a record at an offset the log never had),
or to fail on the torn header at every fetch. Now the first use truncates the torn tail and
reads go on from the next segment, as Kafka's reads take a torn batch as a segment's end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.batch import iter_batches

from .helpers import make_batch

BATCH = len(make_batch(3))
CONFIG = LogConfig.from_properties({"segment.bytes": str(BATCH * 4)})


def consume(log: LocalLog) -> list[int]:
    """Base offsets of the batches a consumer reads from offset 0, each fetch's bytes decoded
    and CRC-checked."""
    offset, got = 0, []
    while offset < log.log_end_offset:
        info = log.read(offset, 1 << 20)
        assert info.regions, f"nothing read at {offset}"
        batches = iter_batches(b"".join(r.read() for r in info.regions), validate=True)
        got += [h.base_offset for _, h in batches]
        offset = batches[-1][1].next_offset
    return got


@pytest.mark.parametrize("cut", [BATCH + 30, 2 * BATCH - 5])  # in the header, in the body
def test_a_torn_trusted_segment_is_read_to_its_last_whole_batch(tmp_path: Path, cut: int) -> None:
    dir = tmp_path / "t-0"
    log = LocalLog.open(dir, CONFIG)
    for i in range(10):  # offsets 0..29, segments at 0, 12, 24 (4 batches each)
        log.append_as_leader(make_batch(3, seed=i), 0)
    log.close()  # the recovery point is the log end: every segment is trusted
    os.truncate(log_files.log_file(dir, 12), 2 * BATCH + cut)  # the 4th batch of segment 12

    for _ in range(2):  # the second open gives the same answer
        log = LocalLog.open(dir, CONFIG)
        assert consume(log) == [0, 3, 6, 9, 12, 15, 18, 24, 27]
        log.close()
