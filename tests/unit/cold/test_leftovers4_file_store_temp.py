"""A put to the ``file://`` store that dies mid-write (SIGKILL while it fsyncs) leaves its
``.tmp-<uuid>`` file; the next opening of the store removes it. A put still running in another
process (its temporary file locked) keeps its file, even an old one, and completes; a leftover
younger than STALE_TEMP_AGE_S, and files not of the temporary pattern, are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tiered_mq.cold.local_stores import STALE_TEMP_AGE_S, FileStore
from tiered_mq.cold.object_store import open_sync_store

# Runs a put whose fsync waits for a line on stdin (the file is written and locked by then).
_PUT = """
import os, sys
from tiered_mq.cold.local_stores import FileStore
real_fsync = os.fsync
def held_fsync(fd):
    print("writing", flush=True)
    sys.stdin.readline()
    real_fsync(fd)
os.fsync = held_fsync
FileStore(sys.argv[1], clean_temp=False).put(sys.argv[2], sys.argv[3].encode())
print("done", flush=True)
"""


def _start_put(root: Path, key: str, value: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _PUT, str(root), key, value],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "writing\n"  # inside the put, its temp file written
    return proc


def _temps(root: Path) -> set[Path]:
    return {p for p in root.rglob(".tmp-*") if p.is_file()}


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_opening_the_store_removes_what_a_crashed_put_left(tmp_path: Path) -> None:
    root = tmp_path / "cold"
    FileStore(root).put("t/0/seg", b"old")

    crashed = _start_put(root, "t/0/seg", "lost")
    (crashed_temp,) = _temps(root)
    crashed.send_signal(signal.SIGKILL)  # the crash: mid-put, before the rename
    crashed.wait(10)
    _age(crashed_temp, STALE_TEMP_AGE_S + 60)

    young = _start_put(root, "t/1/seg", "young")
    (young_temp,) = _temps(root) - {crashed_temp}
    young.send_signal(signal.SIGKILL)
    young.wait(10)  # a crashed put's file, but younger than STALE_TEMP_AGE_S

    running = _start_put(root, "t/2/seg", "value")
    (running_temp,) = _temps(root) - {crashed_temp, young_temp}
    _age(running_temp, STALE_TEMP_AGE_S + 60)  # old, but its put still runs (locked)

    unrelated = [root / "t" / "0" / ".tmp-notes", root / "t" / "0" / f"x.tmp-{'a' * 32}"]
    for path in unrelated:
        path.write_bytes(b"mine")
        _age(path, STALE_TEMP_AGE_S + 60)

    store = open_sync_store(f"file://{root}")  # a tool's store: leaves temp files alone
    assert crashed_temp.exists()
    store = FileStore(root)  # the broker's opening

    assert not crashed_temp.exists()
    assert young_temp.exists() and running_temp.exists()
    assert all(path.read_bytes() == b"mine" for path in unrelated)
    assert store.get("t/0/seg")[0] == b"old"  # the crashed put changed nothing

    assert running.stdin is not None and running.stdout is not None
    running.stdin.write("\n")
    running.stdin.flush()
    assert running.stdout.readline() == "done\n"
    assert running.wait(10) == 0
    assert store.get("t/2/seg")[0] == b"value"  # the running put was not disturbed
    assert not running_temp.exists()

    _age(young_temp, STALE_TEMP_AGE_S + 1)
    FileStore(root)  # once old enough, the next opening takes it
    assert _temps(root) == {unrelated[0]}  # not of the temporary pattern: kept
    assert [o.key for o in store.list("t/")] == ["t/0/seg", f"t/0/x.tmp-{'a' * 32}", "t/2/seg"]
