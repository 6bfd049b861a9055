"""A power failure tears the unflushed tail after DeleteRecords moved the log start offset past
it: the recovered log end lies below the checkpointed log start. As Kafka's
``LogLoader.recoverLog``, the log restarts empty at that log start offset: the start never
moves back and the offsets below it are never given out again."""

from __future__ import annotations

import os
from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch

BATCH = len(make_batch(3))
CONFIG = LogConfig.from_properties({"segment.bytes": str(BATCH * 4)})


def test_log_end_below_the_checkpointed_log_start_restarts_the_log_there(
    tmp_path: Path,
) -> None:
    dir = tmp_path / "t-0"
    log = LocalLog.open(dir, CONFIG)
    for i in range(10):  # offsets 0..29, segments at 0, 12, 24; nothing flushed after the rolls
        log.append_as_leader(make_batch(3, seed=i), 0)
    log.set_log_start_offset(30)  # DeleteRecords to the high watermark: checkpointed
    for segment in log.segments():  # SIGKILL
        segment.close()
    active = log_files.log_file(dir, 24)
    os.truncate(active, active.stat().st_size - 7)  # the power failure tears the last batch

    for _ in range(2):  # the second open gives the same answer
        log = LocalLog.open(dir, CONFIG)
        assert (log.log_start_offset, log.log_end_offset) == (30, 30)
        assert [s.base_offset for s in log.segments()] == [30]
        log.close()
    log = LocalLog.open(dir, CONFIG)
    assert log.append_as_leader(make_batch(3, seed=99), 0).first_offset == 30
    log.close()
