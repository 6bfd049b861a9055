"""A `tiered-mq dev` broker in a subprocess, for integration tests.

    with BrokerProcess(tmp_path / "data") as broker:      # free port, waits until ready
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        broker.restart()                                   # SIGTERM, then start again
        broker.kill()                                      # SIGKILL (no clean shutdown)
        broker.start()

Ready means: the process accepts TCP connections on its port and answers a Metadata request
(decoded with the project's codec). The broker's stdout/stderr go to ``<data_dir>.log``
(appended across restarts) and the tail is shown when it fails to start. ``stop`` sends a
signal and waits; if the process does not exit in time it is killed. The context manager (and
the ``broker``/``broker_factory`` fixtures in conftest.py) always leave no process behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.kafka_requests import fetch_body
from tiered_mq.protocol.codec import decode_response, encode_request
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.records import Record, decode_batches

FETCH = 1
LIST_OFFSETS = 2
METADATA = 3
FIND_COORDINATOR = 10
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_LAUNCH = "import sys; from tiered_mq.cli import main; sys.exit(main())"
_LIVE: set[BrokerProcess] = set()


@atexit.register
def _kill_leftovers() -> None:
    """Never leave a broker behind, even when a test process ends without its teardown."""
    for broker in list(_LIVE):
        with contextlib.suppress(Exception):
            broker.kill()


def plain_jaas(users: Mapping[str, str]) -> str:
    """A ``sasl.jaas.config`` declaring PLAIN ``users`` (name -> password), Kafka's syntax."""
    declared = " ".join(f'user_{user}="{password}"' for user, password in users.items())
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {declared};"


def proc_status_kib(pid: int, field: str) -> int:
    """A memory figure of a live process from ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return bytes(buf)


def request(
    port: int,
    api_key: int,
    version: int,
    body: dict[str, Any],
    timeout: float = 5.0,
    tls: ssl.SSLContext | None = None,
    sasl_plain: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Send one request on a fresh connection (over TLS with ``tls``, after a SASL PLAIN login
    with ``sasl_plain`` = (user, password)) and decode the answer (a tiny test client)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        if tls is None:
            return _logged_in_exchange(raw, api_key, version, body, sasl_plain)
        with tls.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            return _logged_in_exchange(sock, api_key, version, body, sasl_plain)


def _logged_in_exchange(
    sock: socket.socket,
    api_key: int,
    version: int,
    body: dict[str, Any],
    sasl_plain: tuple[str, str] | None,
) -> dict[str, Any]:
    if sasl_plain is not None:
        user, password = sasl_plain
        shake = exchange(sock, SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        token = f"\0{user}\0{password}".encode()
        auth = exchange(sock, SASL_AUTHENTICATE, 0, {"auth_bytes": token})
        if shake["error_code"] or auth["error_code"]:
            raise ValueError(f"SASL login failed: {shake}, {auth}")
    return exchange(sock, api_key, version, body)


def exchange(
    sock: socket.socket, api_key: int, version: int, body: dict[str, Any]
) -> dict[str, Any]:
    """One request and its decoded answer on an open connection."""
    sock.sendall(encode_request(api_key, version, 1, "broker-process", body))
    (size,) = struct.unpack(">i", _recv_exact(sock, 4))
    return decode_response(api_key, version, _recv_exact(sock, size))


class BrokerProcess:
    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        startup_timeout: float = 30.0,
        tls: ssl.SSLContext | None = None,
        sasl_plain: tuple[str, str] | None = None,
    ) -> None:
        """With ``tls`` (a client context trusting the broker's certificate) the broker
        listens on ``SSL://`` (``extra_args`` give its ``ssl.*`` configs); with ``sasl_plain``
        (a user and password of its ``sasl.jaas.config``) on ``SASL_PLAINTEXT://``, or on
        ``SASL_SSL://`` with both. Readiness is checked the same way."""
        self.data_dir = Path(data_dir)
        self.tls = tls
        self.sasl_plain = sasl_plain
        self._fixed_port = port is not None
        self.port = port or free_port()
        self.extra_args = list(extra_args)
        self.env = env
        self.startup_timeout = startup_timeout
        self.log_path = self.data_dir.with_name(self.data_dir.name + ".log")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def command(self) -> list[str]:
        args = ["dev", "--port", str(self.port), "--data-dir", str(self.data_dir)]
        if "--metrics-port" not in self.extra_args:
            args += ["--metrics-port", "0"]
        protocol = {(False, False): "", (True, False): "SSL", (False, True): "SASL_PLAINTEXT"}
        name = protocol.get((self.tls is not None, self.sasl_plain is not None), "SASL_SSL")
        if name:
            args += ["--config", f"listeners={name}://127.0.0.1:{self.port}"]
        return [sys.executable, "-c", _LAUNCH, *args, *self.extra_args]

    def start(self) -> BrokerProcess:
        """Start and wait until ready. A free port picked here that another process grabbed
        in the meantime is replaced by a new one (up to 3 times)."""
        for attempt in range(3):
            try:
                return self._start_once()
            except RuntimeError:
                lost_race = "address already in use" in self.log_tail(5)
                if self._fixed_port or not lost_race or attempt == 2:
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    def _start_once(self) -> BrokerProcess:
        if self.running:
            raise RuntimeError("broker already running")
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update(self.env or {})
        env.setdefault("PYTHONUNBUFFERED", "1")
        with open(self.log_path, "ab") as log:
            log.write(f"\n==== start {' '.join(self.command())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # Ctrl-C on the test run does not reach it...
            )
        _LIVE.add(self)  # ...but the test process's exit does (see _kill_leftovers)
        try:
            self.wait_ready()
        except BaseException:
            self.kill()
            raise
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"broker exited with {self.proc.returncode} during start:\n{self.log_tail()}"
                )
            try:
                answer = request(
                    self.port, METADATA, 1, {"topics": []}, 2.0, self.tls, self.sasl_plain
                )
                if answer["brokers"]:
                    return
            except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
                last_error = e
            time.sleep(0.05)
        raise TimeoutError(
            f"broker on port {self.port} not ready in {self.startup_timeout} s "
            f"({last_error!r}):\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        """Send ``sig`` and wait for the exit (killed after ``timeout``); returns the exit code."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(10)
        self.proc = None
        _LIVE.discard(self)
        return proc.returncode

    def kill(self) -> int | None:
        return self.stop(signal.SIGKILL)

    def restart(self, sig: int = signal.SIGTERM) -> BrokerProcess:
        """Stop with ``sig`` and start again on the same port and data dir."""
        self.stop(sig)
        deadline = time.monotonic() + 10
        while True:  # the old socket may linger a moment
            try:
                return self.start()
            except RuntimeError:
                if time.monotonic() > deadline or "address already in use" not in self.log_tail():
                    raise
                time.sleep(0.2)

    def __enter__(self) -> BrokerProcess:
        if not self.running:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def stored_batches(
    port: int, topic: str, partition: int, offset: int = 0
) -> list[tuple[BatchHeader, list[Record]]]:
    """A partition's batches as the broker stores them (plain Fetch v11, no client library),
    from ``offset`` to the high watermark."""
    batches: list[tuple[BatchHeader, list[Record]]] = []
    while True:
        body = fetch_body(topic, offset, partition=partition, max_bytes=1 << 22)
        answer = request(port, FETCH, 11, body)
        data = answer["responses"][0]["partitions"][0]
        assert data["error_code"] == 0, data
        got = list(decode_batches(data["records"] or b""))
        batches += got
        if got:
            offset = got[-1][0].next_offset
        if not got or offset >= data["high_watermark"]:
            return batches
