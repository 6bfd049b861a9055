"""Test support for Spark: one local SparkSession per test process, and an HTTP proxy in front
of an S3 server that counts the requests Spark's executors make (they are other processes, so
a boto3 event hook in the test process would not see them)."""

from __future__ import annotations

import atexit
import http.client
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

_session: Any = None
_lock = threading.Lock()


def spark_session() -> Any:
    """The process's SparkSession (local[2], no UI), with ``tiered-mq`` registered with filter
    pushdown; stopped at interpreter exit."""
    global _session
    with _lock:
        if _session is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from pyspark.sql import SparkSession

                import tiered_mq.spark

                _session = (
                    SparkSession.builder.master("local[2]")
                    .appName("tiered-mq-tests")
                    .config("spark.ui.enabled", "false")
                    .config("spark.ui.showConsoleProgress", "false")
                    .config("spark.sql.shuffle.partitions", "2")
                    .config("spark.sql.session.timeZone", "UTC")
                    .config("spark.driver.memory", "1g")
                    .getOrCreate()
                )
                _session.sparkContext.setLogLevel("ERROR")
                tiered_mq.spark.register(_session)
            atexit.register(_session.stop)
        return _session


class CountingProxy:
    """Forwards every HTTP request to ``upstream`` and records ``(method, path)``.

    SigV4 signs the Host header, which the proxy passes through unchanged, so a client pointed
    at the proxy talks to the real server with valid signatures.
    """

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy._lock:
                    proxy.requests.append((self.command, self.path))
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    conn.request(self.command, self.path, body=body, headers=dict(self.headers))
                    response = conn.getresponse()
                    data = response.read()
                finally:
                    conn.close()
                self.send_response(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def log_gets(self) -> int:
        """GET requests of ``.log`` objects (ranged or whole) since the last reset."""
        with self._lock:
            paths = [p.split("?")[0] for m, p in self.requests if m == "GET"]
        return sum(1 for p in paths if p.endswith(".log"))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
