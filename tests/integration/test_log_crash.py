"""Crash test of the local log: SIGKILL a writer at random moments, many times over.

Every other round also simulates a power loss: the unflushed tail of the active segment is cut
at a random byte (torn batches) and its indexes lose a random tail.

Every batch the writer reported flushed must be present byte for byte after reopening, the
log must read cleanly (every CRC) to its end, and appending must continue.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.hot.crash_writer import CONFIG, EPOCH, count_batches, expected_batch, produced_batch
from tests.unit.hot.helpers import read_all
from tiered_mq.hot import log_files
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.record.batch import HEADER_SIZE, iter_batches, read_header

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20


def _lose_unflushed_tail(directory: Path, durable_offset: int, rng: random.Random) -> None:
    """Simulate a power loss after the kill: the active segment loses a random part of what
    lies past the last flushed offset (possibly mid-batch), and its indexes a random tail."""
    bases = sorted(
        b
        for p in directory.iterdir()
        if (b := log_files.offset_from_file_name(p.name)) is not None
        and log_files.is_log_file(p.name)
    )
    base = bases[-1]
    path = log_files.log_file(directory, base)
    data = path.read_bytes()
    position = 0
    while position + HEADER_SIZE <= len(data):
        header = read_header(data, position)
        if header.base_offset >= durable_offset:
            break
        position += header.size
    os.truncate(path, rng.randint(position, len(data)))
    for index in (
        log_files.offset_index_file(directory, base),
        log_files.time_index_file(directory, base),
    ):
        if index.exists():
            os.truncate(index, rng.randint(0, index.stat().st_size))


@pytest.mark.integration
def test_sigkill_never_loses_flushed_batches(tmp_path: Path) -> None:
    rng = random.Random(20261121)
    directory = tmp_path / "crash-0"
    max_flushed, durable_offset = -1, 0
    deadline = time.monotonic() + 50
    for round_ in range(KILLS):
        if time.monotonic() > deadline:
            break
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.unit.hot.crash_writer", str(directory), str(round_)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("start"), first
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait()
        for line in rest.splitlines():
            index, end_offset = line.split()
            max_flushed = max(max_flushed, int(index))
            durable_offset = max(durable_offset, int(end_offset))
        if round_ % 2:
            _lose_unflushed_tail(directory, durable_offset, rng)

        log = LocalLog.open(directory, CONFIG)
        data = read_all(log)
        batches = iter_batches(data)  # validates every batch's CRC to the end
        assert len(batches) >= max_flushed + 1, f"round {round_}: flushed batches lost"
        for i, (pos, header) in enumerate(batches):
            assert data[pos : pos + header.size] == expected_batch(i), f"batch {i} differs"
        assert count_batches(log) == len(batches)
        # appending continues where the log ends
        log.append_as_leader(produced_batch(len(batches)), EPOCH)
        log.close()
    assert max_flushed > 50, "the writer never got going"
    log = LocalLog.open(directory, CONFIG)
    assert len(log.segments()) > 2, "the test never crossed a roll"
    log.close()
