"""``produce T < big.txt`` on a terminal shows the progress bar that ``--file`` shows (stdin
redirected from a file has a size); a pipe still shows none."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import uuid
from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tiered_mq.cli.produce import input_size

pytestmark = pytest.mark.integration


def test_input_size(tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"a\nbb\n")
    with f.open("rb") as stream:
        assert input_size(stream) == 5
        stream.readline()
        assert input_size(stream) == 3
    read, write = os.pipe()
    with os.fdopen(read, "rb") as pipe, os.fdopen(write, "wb"):
        assert input_size(pipe) is None


def test_stdin_from_a_file_shows_progress_on_a_terminal(
    shared_broker: BrokerProcess, tmp_path: Path
) -> None:
    lines = tmp_path / "lines.txt"
    lines.write_bytes(b"".join(b"%06d\n" % i for i in range(20_000)))
    topic = f"progress-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "TIERED_MQ_BOOTSTRAP": shared_broker.bootstrap}
    command = [sys.executable, "-m", "tiered_mq", "produce", topic]
    master, slave = pty.openpty()  # stderr a terminal, as in an operator's shell
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # its size
    with lines.open("rb") as stdin:
        process = subprocess.Popen(command, stdin=stdin, stderr=slave, env=env)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal's other end closed: the command has ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert process.wait(timeout=60) == 0, shown
    assert b"140k/140k" in shown, shown  # tqdm's bytes done/total of the 140,000-byte file
    assert b"Produced 20000 records" in shown
