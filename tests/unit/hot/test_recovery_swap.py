"""A ``.log.swap`` that holds no whole batch (zeroed by the file system or emptied by hand;
the log cleaner never writes one) has no offset range to replace: recovery discards it and
keeps every segment, instead of deleting every segment from its base offset on."""

from __future__ import annotations

from pathlib import Path

from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

from .helpers import make_batch, read_all

CONFIG = LogConfig.from_properties({"segment.bytes": str(len(make_batch(3)) * 4)})


def test_a_swap_without_a_whole_batch_is_discarded(tmp_path: Path) -> None:
    dir = tmp_path / "t-0"
    log = LocalLog.open(dir, CONFIG)
    for i in range(10):  # offsets 0..29, segments at 0, 12, 24
        log.append_as_leader(make_batch(3, seed=i), 0)
    data = read_all(log)
    log.close()
    stem = log_files.file_name(0)
    (dir / f"{stem}.log.swap").write_bytes(bytes(200))
    (dir / f"{stem}.txnindex.swap").write_bytes(bytes(34))

    for _ in range(2):  # the second open gives the same answer
        log = LocalLog.open(dir, CONFIG)
        assert (log.log_start_offset, log.log_end_offset) == (0, 30)
        assert read_all(log) == data
        assert not list(dir.glob("*.swap"))
        assert not (dir / f"{stem}.txnindex").exists()
        log.close()
