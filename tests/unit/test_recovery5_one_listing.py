"""A log's open lists its directory once (recovery's steps 1-3 and its segments all from one
listing; again only after a compaction swap was completed): it listed it four times, and
looked up each index file's ``.log`` with a stat of its own (2,000 partitions: about 0.2 s of
the start's CPU). What the steps do with the listing is unchanged: leftovers and orphan
indexes go, every segment opens."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.hot.helpers import make_batch, read_all
from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

CONFIG = LogConfig.from_properties({"segment.bytes": "400"})


def test_an_open_lists_the_log_directory_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dir = tmp_path / "t-0"
    log = LocalLog.open(dir, CONFIG)
    for i in range(8):
        log.append_as_leader(make_batch(3, seed=i), 1)
    data = read_all(log)
    log.close()
    assert len(list(dir.glob("*.log"))) > 2
    (dir / "00000000000000000999.index").write_bytes(b"")  # an orphan index
    (dir / "00000000000000000000.log.deleted").write_bytes(b"")  # a leftover
    listings: list[str] = []
    real_listdir, real_scandir = os.listdir, os.scandir

    def listdir(path: str | Path = ".") -> list[str]:
        listings.append(str(path))
        return real_listdir(path)

    def scandir(path: str | Path = ".") -> Iterator[os.DirEntry[str]]:
        listings.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)
    reopened = LocalLog.open(dir, CONFIG)
    monkeypatch.undo()
    assert listings.count(str(dir)) == 1, listings
    assert not (dir / "00000000000000000999.index").exists()
    assert not (dir / ("00000000000000000000.log" + log_files.DELETED_SUFFIX)).exists()
    assert read_all(reopened) == data
    reopened.close()
