"""A stop (SIGTERM) while the start recovers one partition with a large unflushed tail ends the
start within a couple of seconds, the partition's files as they were; the next start recovers
the whole tail and serves every record. The old code finished the partition's scan (and its
producer state replay) first: the broker did not exit until then."""

from __future__ import annotations

import hashlib
import signal
import struct
import time
from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import produce_values
from tests.integration.test_lifecycle_hunt_signals import last_start, launch, log_end_offsets
from tiered_mq.record.records import encode_batch

pytestmark = pytest.mark.integration

TAIL_BYTES = 96 << 20  # one-record batches: ~1.2 M batches, ~8 s of recovery on the old code


def append_tail(segment: Path, first_offset: int, total_bytes: int) -> int:
    """Append valid one-record batches (copies of one, base offsets patched: the CRC-32C does
    not cover them) from ``first_offset`` to ``segment``; returns the next offset."""
    batch = bytearray(encode_batch([(None, b"tail-value", None, int(time.time() * 1000))]))
    offset = first_offset
    with open(segment, "ab") as out:
        for _ in range(total_bytes // len(batch) // 1024):
            chunk = bytearray()
            for _ in range(1024):
                struct.pack_into(">q", batch, 0, offset)
                chunk += batch
                offset += 1
            out.write(chunk)
    return offset


def files_of(dir: Path) -> dict[str, str]:
    """Each file of ``dir`` and a digest of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(dir.iterdir())}


def test_sigterm_during_a_long_recovery_scan_exits_at_once(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", startup_timeout=120)
    broker.start()
    produce_values(broker.bootstrap, "big", b"a", b"b", b"c")
    broker.kill()  # unclean: the next start recovers the partition's tail
    dir = tmp_path / "data" / "big-0"
    segment = dir / "00000000000000000000.log"
    end = append_tail(segment, 3, TAIL_BYTES)
    whole = segment.stat().st_size
    with open(segment, "ab") as out:
        out.write(b"\x00" * 30)  # a torn last batch: recovery truncates it, and only recovery
    before = files_of(dir)

    proc = launch(broker)
    try:
        deadline = time.monotonic() + 30
        while "tiered storage on" not in last_start(broker):  # the step before the opens
            assert time.monotonic() < deadline, broker.log_tail()
            time.sleep(0.02)
        time.sleep(1.0)  # well inside the partition's scan
        proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        assert proc.wait(60) == 0, broker.log_tail()
        took = time.monotonic() - signalled
    finally:
        proc.kill()
        proc.wait()
    output = last_start(broker)
    assert "start abandoned" in output and "Traceback" not in output, output
    assert took < 2.5, f"{took:.1f} s from SIGTERM to exit"
    assert files_of(dir) == before  # nothing truncated, no index or checkpoint written

    with broker:
        assert log_end_offsets(broker.port, "big", 1) == [end]
    assert segment.stat().st_size == whole  # the torn batch truncated, nothing else
