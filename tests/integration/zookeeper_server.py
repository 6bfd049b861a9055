"""A real ZooKeeper for tests: Debian's ZooKeeper 3.8 (``apt-get install zookeeper``), one JVM.

Use from any test module::

    from tests.integration.zookeeper_server import ZooKeeperServer, zookeeper  # noqa: F401

    @pytest.mark.integration
    def test_something(zookeeper: ZooKeeperServer) -> None:
        connect = zookeeper.connect_string(chroot=zookeeper.new_chroot())

One standalone server per test module (the ``zookeeper`` fixture), on a free port with its own
data directory, started the way ENVIRONMENT.md describes (``QuorumPeerMain`` with a zoo.cfg of
our own: Debian's ``zkServer.sh`` ignores ``--config``). Ready means ``ruok`` answers ``imok``.
``stop()`` / ``start()`` take it down and bring it back on the same port and data (for "ZooKeeper
was unreachable" tests); ``new_chroot()`` gives each test its own namespace on a shared server.
``minSessionTimeout`` is 1 s so that tests can use short sessions.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.integration.broker_process import free_port

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
TICK_MS = 500


def ruok(port: int, timeout: float = 1.0) -> bool:
    """ZooKeeper's four-letter health check."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"ruok")
            return s.recv(16) == b"imok"
    except OSError:
        return False


class ZooKeeperServer:
    """One standalone ZooKeeper server on 127.0.0.1:``port``."""

    def __init__(self) -> None:
        if not ZOOKEEPER_JAR.is_file():
            raise RuntimeError(f"{ZOOKEEPER_JAR} not found: run ./scripts/setup.sh (apt zookeeper)")
        java = shutil.which("java")
        if java is None:
            raise RuntimeError("java not found: run ./scripts/setup.sh")
        self.java = java
        self.dir = Path(tempfile.mkdtemp(prefix="zookeeper-"))
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        (self.dir / "data").mkdir()
        (self.dir / "zoo.cfg").write_text(
            f"tickTime={TICK_MS}\n"
            f"minSessionTimeout={2 * TICK_MS}\n"
            f"dataDir={self.dir / 'data'}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,mntr\n"
        )
        (self.dir / "log4j.properties").write_text(
            "log4j.rootLogger=WARN, F\n"
            "log4j.appender.F=org.apache.log4j.FileAppender\n"
            f"log4j.appender.F.File={self.dir / 'zookeeper.log'}\n"
            "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.F.layout.ConversionPattern=%d %p %c: %m%n\n"
        )

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def connect_string(self, chroot: str = "") -> str:
        """``host:port[/chroot]``: Kafka's ``zookeeper.connect`` form."""
        return self.address + chroot

    @staticmethod
    def new_chroot() -> str:
        return f"/test-{uuid.uuid4().hex[:8]}"

    def start(self, timeout: float = 30) -> ZooKeeperServer:
        classpath = f"{self.dir}:{ZOOKEEPER_JAR}:/usr/share/java/*"
        with open(self.dir / "stdout.log", "ab") as out:
            self._proc = subprocess.Popen(
                [
                    self.java,
                    "-Xmx256m",
                    "-cp",
                    classpath,
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    str(self.dir / "zoo.cfg"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited: {self.log_tail()}")
            if ruok(self.port):
                return self
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"ZooKeeper did not answer ruok in {timeout} s: {self.log_tail()}")

    def stop(self) -> None:
        """SIGKILL: the server is gone at once, as in a crash (its data stays)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(10)
        self._proc = None

    def log_tail(self) -> str:
        parts = []
        for name in ("stdout.log", "zookeeper.log"):
            with contextlib.suppress(OSError):
                parts.append((self.dir / name).read_text(errors="replace")[-2000:])
        return "\n".join(parts)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# a connect right after ruok took more than 10 s on a loaded machine
CONNECT_TIMEOUT_S = 30.0


def kazoo_client(connect: str, **kwargs: Any) -> KazooClient:
    """A started kazoo client of ``host:port[/chroot]``, the chroot created first (as the
    broker does) so that a test may look before the broker has started; ``kwargs`` go to
    KazooClient (``client_id`` joins an existing session)."""
    address, slash, chroot = connect.partition("/")
    if chroot:
        root = KazooClient(hosts=address)
        root.start(CONNECT_TIMEOUT_S)
        try:
            root.ensure_path(slash + chroot)
        finally:
            root.stop()
            root.close()
    client = KazooClient(hosts=connect, **kwargs)
    client.start(CONNECT_TIMEOUT_S)
    return client


@pytest.fixture(scope="module")
def zookeeper() -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer().start()
    try:
        yield server
    finally:
        server.cleanup()
