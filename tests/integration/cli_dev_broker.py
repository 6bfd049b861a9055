"""A ``tiered-mq dev`` broker in a subprocess for the CLI and SDK integration tests.

It binds port 0 (the bootstrap address is read from the ``bootstrap:`` line it prints) and
keeps its data in a temporary directory; ``stop()`` sends SIGTERM and waits. To be replaced
by ``tests/integration/broker_process.py`` once that fixture offers the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

START_TIMEOUT_S = 30.0


class DevBroker:
    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="tmq-cli-")
        self.data_dir = Path(self._tmp.name)
        self.bootstrap = ""
        self.output: list[str] = []
        self._proc: subprocess.Popen[str] | None = None

    def start(self) -> DevBroker:
        cmd = [
            sys.executable,
            "-c",
            "from tiered_mq.cli import main; main()",
            "dev",
            "--port",
            "0",
            "--metrics-port",
            "0",
            "--data-dir",
            str(self.data_dir),
        ]
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        ready = threading.Event()

        def _read_output() -> None:
            assert self._proc is not None and self._proc.stdout is not None
            for line in self._proc.stdout:
                self.output.append(line)
                if line.strip().startswith("bootstrap:"):
                    self.bootstrap = line.split(":", 1)[1].strip()
                    ready.set()

        threading.Thread(target=_read_output, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.wait(0.1):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("tiered-mq dev did not start:\n" + "".join(self.output))
        return self

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
        self._tmp.cleanup()
