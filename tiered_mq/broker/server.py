"""The broker's TCP front end: frames in, handler dicts through, response chunks out.

Per connection (a ``BufferedProtocol``; no stream objects on the hot path):

- Framing: int32 size, then ``size`` bytes. A size that is negative or above
  ``socket.request.max.bytes`` is refused before a byte of the body is buffered: the connection
  is logged and aborted. Small frames are parsed out of a reusable receive buffer; a frame that
  does not fit what has arrived gets a buffer of its exact size that the socket fills directly.
- Order: frames go to a per-connection queue that one task drains, so requests are handled and
  answered strictly in order while the connection keeps reading (pipelining). Reading pauses when
  more than ``MAX_QUEUED_BYTES`` of requests wait.
- Unsupported requests: ApiVersions of an unknown version gets ``api_versions_fallback``; any
  other unknown API key or version, a header or body that does not decode, or a handler that
  raises, closes that connection only (as Kafka does). A client that disconnects mid-request
  only loses its own connection; its queued requests are dropped.
- Writes: bytes chunks go to the transport; ``FileRegion`` chunks (Fetch data) above
  ``INLINE_REGION_MAX`` are sent with ``os.sendfile`` from the segment file to the socket once
  the transport's buffer is empty (so bytes stay in order). uvloop transports have no
  ``loop.sendfile`` and own their fd's registration, so the connection polls a ``dup`` of the
  socket fd for writability when the socket buffer is full: the whole region goes zero-copy.
  The dup is closed in ``connection_lost`` (else it would keep the socket open). The write
  buffer's high-water mark is 0, so ``pause_writing`` fires whenever bytes wait in user space
  and the writer awaits ``resume_writing`` before the next region.
- Pinning: before its first await, a response dups the fd of every segment file it sends from
  and reads only through the dups (closed after the write). Local retention may close a segment
  while the response waits for the socket; the kernel then reuses the closed fd's number, and
  reading through it would send another file's bytes. A segment closed before the response
  starts (a retention during a multi-partition fetch) closes the connection: the client
  fetches again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers import Handler
from tiered_mq.errors import KafkaError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.protocol.codec import (
    Support,
    api_versions_fallback,
    classify,
    decode_request,
    encode_response,
)
from tiered_mq.protocol.header import RequestHeader, decode_request_header
from tiered_mq.record.file_records import FileRegion

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker

log = logging.getLogger(__name__)

RECV_BUFFER: Final = 256 * 1024
MAX_QUEUED_BYTES: Final = 64 * 1024 * 1024
PREAD_CHUNK: Final = 1024 * 1024
# regions up to this size are read and written with the rest of the response (one syscall
# instead of a write plus a sendfile): cheaper for the small fetches of a caught-up consumer
INLINE_REGION_MAX: Final = 16 * 1024
JOIN_MAX: Final = 64 * 1024  # responses up to this size are joined into one write
_SIZE = struct.Struct(">i")


class _Close(Exception):
    """Close this connection (after logging why)."""


class KafkaConnection(asyncio.BufferedProtocol):
    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self.broker = server.broker
        self.max_request = server.max_request_bytes
        self.transport: asyncio.Transport | None = None
        self.peer = ""
        self._recv = bytearray(RECV_BUFFER)
        self._start = 0
        self._end = 0
        self._frame: bytearray | None = None
        self._filled = 0
        self._queue: deque[bytearray] = deque()
        self._queued_bytes = 0
        self._wakeup: asyncio.Future[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._write_ready: asyncio.Future[None] | None = None
        self._closed = False
        self._read_paused = False
        self._dup_fd: int | None = None
        self._writable: asyncio.Future[None] | None = None
        self._eof = False

    # connection lifecycle -----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCPTransport is not an asyncio.Transport subclass but has its methods
        self.transport = transport  # type: ignore[assignment]
        assert self.transport is not None
        self.transport.set_write_buffer_limits(high=0, low=0)
        self._set_socket_buffers()
        peer = self.transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.server.connections.add(self)
        self.broker.metrics.connections.inc()
        self._worker = asyncio.get_running_loop().create_task(
            self._process_requests(), name=f"kafka-connection-{self.peer}"
        )

    def _set_socket_buffers(self) -> None:
        """Apply socket.send/receive.buffer.bytes (-1: leave the OS's autotuning alone)."""
        sock = self.transport.get_extra_info("socket") if self.transport else None
        if sock is None:
            return
        for key, opt in (
            ("socket.send.buffer.bytes", socket.SO_SNDBUF),
            ("socket.receive.buffer.bytes", socket.SO_RCVBUF),
        ):
            size = self.broker.config.get_int(key, -1)
            if size > 0:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, opt, size)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self.server.connections.discard(self)
        self.broker.metrics.connections.dec()
        self._queue.clear()
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
        self._wake(self._write_ready)
        self._wake(self._wakeup)
        if self._dup_fd is not None and self._dup_fd >= 0:
            if self._writable is not None:
                asyncio.get_running_loop().remove_writer(self._dup_fd)
                self._wake(self._writable)
            os.close(self._dup_fd)
            self._dup_fd = -1

    def close(self, reason: str | None = None) -> None:
        if reason:
            log.warning("closing connection from %s: %s", self.peer, reason)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    @staticmethod
    def _wake(fut: asyncio.Future[None] | None) -> None:
        if fut is not None and not fut.done():
            fut.set_result(None)

    # reading ------------------------------------------------------------------------------------
    def get_buffer(self, sizehint: int) -> memoryview:
        if self._frame is not None:
            return memoryview(self._frame)[self._filled :]
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._recv):
            n = self._end - self._start
            self._recv[:n] = self._recv[self._start : self._end]
            self._start, self._end = 0, n
        return memoryview(self._recv)[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._frame is not None:
            self._filled += nbytes
            if self._filled == len(self._frame):
                frame, self._frame = self._frame, None
                self._enqueue(frame)
            return
        self._end += nbytes
        recv = self._recv
        while self._end - self._start >= 4:
            (size,) = _SIZE.unpack_from(recv, self._start)
            if size < 0 or size > self.max_request:
                self._refuse(size)
                return
            begin = self._start + 4
            avail = self._end - begin
            if avail >= size:
                self._start = begin + size
                self._enqueue(recv[begin : begin + size])
            else:
                frame = bytearray(size)
                frame[:avail] = recv[begin : self._end]
                self._frame, self._filled = frame, avail
                self._start = self._end = 0
                return

    def eof_received(self) -> bool | None:
        """The client shut down its side: answer what it already sent, then close."""
        self._eof = True
        self._wake(self._wakeup)
        return True  # keep the transport open for our responses

    def _refuse(self, size: int) -> None:
        self._start = self._end = 0
        self.close(f"request of {size} bytes refused (socket.request.max.bytes={self.max_request})")

    def _enqueue(self, frame: bytearray) -> None:
        if self._closed:
            return
        self._queue.append(frame)
        self._queued_bytes += len(frame)
        if self._queued_bytes > MAX_QUEUED_BYTES and not self._read_paused:
            assert self.transport is not None
            self._read_paused = True
            self.transport.pause_reading()
        self._wake(self._wakeup)

    # processing ---------------------------------------------------------------------------------
    async def _process_requests(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while not self._closed:
                if not self._queue:
                    if self._eof:
                        if self.transport is not None:
                            self.transport.close()  # after the buffered responses
                        return
                    self._wakeup = loop.create_future()
                    await self._wakeup
                    self._wakeup = None
                    continue
                frame = self._queue.popleft()
                self._queued_bytes -= len(frame)
                if self._read_paused and self._queued_bytes < MAX_QUEUED_BYTES // 2:
                    self._read_paused = False
                    if self.transport is not None:
                        self.transport.resume_reading()
                chunks = await self._handle(frame)
                if chunks and not self._closed:
                    await self._write(chunks)
        except _Close as e:
            self.close(str(e))
        except asyncio.CancelledError:
            raise
        except (ConnectionError, OSError) as e:
            self.close(f"write failed: {e}")
        except Exception:
            log.exception("connection from %s failed", self.peer)
            self.close()

    async def _handle(self, frame: bytearray) -> list[Any] | None:
        view = memoryview(frame)
        try:
            header, pos = decode_request_header(view)
        except KafkaError as e:
            raise _Close(f"undecodable request header: {e}") from None
        support = classify(header)
        if support is not Support.SUPPORTED:
            if header.api_key == ApiKey.API_VERSIONS:
                return [api_versions_fallback(header.correlation_id)]
            raise _Close(
                f"unsupported request: api key {header.api_key} v{header.api_version} "
                f"({support.value})"
            )
        handler = self.server.handlers.get(header.api_key)
        if handler is None:
            raise _Close(f"no handler for api key {header.api_key}")
        try:
            request = decode_request(header, view[pos:])
        except KafkaError as e:
            raise _Close(f"undecodable {handler.name} v{header.api_version}: {e}") from None
        return await self._dispatch(handler, header, request)

    async def _dispatch(
        self, handler: Handler, header: RequestHeader, request: dict[str, Any]
    ) -> list[Any] | None:
        requests, errors, latency = self.broker.metrics.for_api(handler.name)
        ctx = RequestContext(header, self.broker, self.peer)
        started = time.perf_counter()
        try:
            response = await handler.handle(ctx, request)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            errors.inc()
            log.exception("%s v%d from %s failed", handler.name, header.api_version, self.peer)
            raise _Close(f"{handler.name} handler failed: {e!r}") from None
        finally:
            requests.inc()
            latency.observe(time.perf_counter() - started)
        if response is None:
            return None
        return encode_response(header, response)

    # writing ------------------------------------------------------------------------------------
    def pause_writing(self) -> None:
        if self._write_ready is None or self._write_ready.done():
            self._write_ready = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._wake(self._write_ready)

    async def _drain(self) -> None:
        fut = self._write_ready
        if fut is not None and not fut.done():
            await fut
        if self._closed:
            raise ConnectionResetError("connection closed")

    async def _write(self, chunks: list[Any]) -> None:
        # Pin every region's segment file before the first await: local retention may close
        # (and unlink) a segment while this response waits for the socket, and the kernel
        # hands a closed fd's number to the next open file; reading the region through that
        # number would send another file's bytes (a consumer would skip ahead to them). A dup
        # keeps the open file description, so the deleted segment's bytes stay readable.
        pinned: dict[int, int] = {}
        try:
            for c in chunks:
                if isinstance(c, FileRegion) and id(c.file) not in pinned:
                    pinned[id(c.file)] = _pin(c)
            await self._write_pinned(chunks, pinned)
        finally:
            for fd in pinned.values():
                os.close(fd)

    async def _write_pinned(self, chunks: list[Any], pinned: dict[int, int]) -> None:
        transport = self.transport
        assert transport is not None
        pending: list[Any] = []
        for c in chunks:
            if isinstance(c, FileRegion) and c.length <= INLINE_REGION_MAX:
                data = os.pread(pinned[id(c.file)], c.length, c.position)
                if len(data) != c.length:
                    raise _Close(f"segment file shrank under a fetch at position {c.position}")
                pending.append(data)
                self.broker.metrics.bytes_out.inc(c.length)
            elif isinstance(c, FileRegion):
                if pending:
                    transport.writelines(pending)
                    pending = []
                await self._send_region(c, pinned[id(c.file)])
            else:
                pending.append(c)
        if len(pending) == 1:
            transport.write(pending[0])
        elif pending:
            if sum(len(c) for c in pending) <= JOIN_MAX:
                transport.write(b"".join(pending))  # one small send beats writev of pieces
            else:
                transport.writelines(pending)
        await self._drain()

    def _sendfile_fd(self) -> int:
        """A dup of the socket's fd (-1 if none): ours to poll for writability, since the
        transport owns the original's registration in the event loop."""
        if self._dup_fd is None:
            sock = self.transport.get_extra_info("socket") if self.transport else None
            self._dup_fd = os.dup(sock.fileno()) if sock is not None else -1
        return self._dup_fd

    async def _wait_writable(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._writable = fut
        loop.add_writer(fd, self._wake, fut)
        try:
            await fut
        finally:
            self._writable = None
            if not self._closed:
                loop.remove_writer(fd)
        if self._closed:
            raise ConnectionResetError("connection closed")

    async def _send_region(self, region: FileRegion, in_fd: int) -> None:
        """Send ``region`` from ``in_fd`` (the region's file, pinned by ``_write``)."""
        transport = self.transport
        assert transport is not None
        out_fd = self._sendfile_fd()
        offset, remaining = region.position, region.length
        while remaining > 0:
            await self._drain()  # bytes queued on the transport go first
            if out_fd >= 0 and transport.get_write_buffer_size() == 0:
                try:
                    sent = os.sendfile(out_fd, in_fd, offset, remaining)
                except BlockingIOError:  # socket buffer full: wait, then go on zero-copy
                    await self._wait_writable(out_fd)
                    continue
                if sent == 0:
                    raise _Close(f"segment file shrank under a fetch at position {offset}")
                offset += sent
                remaining -= sent
                continue
            # no socket fd (not a TCP transport): queue a copy on the transport
            data = os.pread(in_fd, min(remaining, PREAD_CHUNK), offset)
            if not data:
                raise _Close(f"segment file shrank under a fetch at position {offset}")
            transport.write(data)
            offset += len(data)
            remaining -= len(data)
        self.broker.metrics.bytes_out.inc(region.length)


def _pin(region: FileRegion) -> int:
    """A dup of the region's file descriptor; _Close when the segment is already closed (a
    retention that ran while the fetch was being answered: the client fetches again)."""
    try:
        return os.dup(region.file.fileno())
    except ValueError:
        raise _Close("segment deleted under a fetch response (client will fetch again)") from None


class KafkaServer:
    """Accepts connections for one broker; ``handlers`` maps api key -> handler module."""

    def __init__(self, broker: Broker, handlers: dict[int, Handler]) -> None:
        self.broker = broker
        self.handlers = handlers
        self.max_request_bytes = broker.config.get_int("socket.request.max.bytes")
        self.connections: set[KafkaConnection] = set()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: KafkaConnection(self), host, port, reuse_address=True, backlog=1024
        )
        sockets = self._server.sockets
        self.port = int(sockets[0].getsockname()[1]) if sockets else port
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.close()
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 5)
            except TimeoutError:
                log.warning("server did not close within 5 s")
            self._server = None
