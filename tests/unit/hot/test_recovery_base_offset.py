"""A batch's base offset is not covered by its CRC: one damaged to lie more than INT_MAX past
its segment's base offset (no append writes that: the log rolls first) is invalid, and
recovery truncates the log there. Recovery used to fail on it (the rebuilt index refused the
entry) and the partition did not open."""

from __future__ import annotations

import struct
from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch, read_all

BATCH = len(make_batch(3))
CONFIG = LogConfig.from_properties({"index.interval.bytes": "1"})


def test_a_base_offset_out_of_the_segments_range_truncates_the_log(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    log = LocalLog.open(dir, CONFIG)
    for i in range(5):
        log.append_as_leader(make_batch(3, seed=i), 0)
    kept = read_all(log)[: 2 * BATCH]
    for segment in log.segments():  # a crash: the recovery point stays at 0
        segment.close()
    path = log_files.log_file(dir, 0)
    data = bytearray(path.read_bytes())
    data[2 * BATCH : 2 * BATCH + 8] = struct.pack(">q", 1 << 40)  # the third batch's
    path.write_bytes(data)

    for _ in range(2):  # the second open gives the same answer
        log = LocalLog.open(dir, CONFIG)
        assert log.log_end_offset == 6
        assert read_all(log) == kept
        log.close()
    log = LocalLog.open(dir, CONFIG)
    assert log.append_as_leader(make_batch(3, seed=9), 0).first_offset == 6
    log.close()
