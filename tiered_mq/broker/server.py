"""The broker's TCP front end: frames in, handler dicts through, response chunks out.

Per connection (a ``BufferedProtocol``; no stream objects on the hot path):

- Framing: int32 size, then ``size`` bytes. A size that is negative or above
  ``socket.request.max.bytes`` is refused before a byte of the body is buffered: the connection
  is logged and aborted. Small frames are parsed out of a reusable receive buffer, which starts
  at ``RECV_BUFFER_INITIAL`` and grows fourfold, up to ``RECV_BUFFER``, each time a read fills
  it (a client with more bytes waiting than it holds), so an idle or lightly used connection
  holds 16 KiB, not 256 KiB (2,000 idle connections: +39 MiB of RSS, +519 MiB before); a frame that
  does not fit what has arrived gets buffers that the socket fills directly: one of its exact
  size up to ``FRAME_CHUNK``, else ``FRAME_CHUNK``-sized pieces joined at the end, so memory
  follows the bytes received, not the size a client declares.
- Order: frames go to a per-connection queue that one task drains, so requests are handled and
  answered strictly in order while the connection keeps reading (pipelining). Reading pauses when
  more than ``MAX_QUEUED_REQUESTS`` requests or ``MAX_QUEUED_BYTES`` of them wait (each counted
  with its per-object overhead), and responses are written one at a time after the socket took
  the previous one: a client that sends without reading stalls itself, not the broker.
- SASL listeners (sasl.py): until the connection has authenticated, a request other than
  ApiVersions, SaslHandshake and SaslAuthenticate closes it, and so does a frame above
  ``sasl.server.max.receive.size`` (Kafka's 512 KiB); so does a failed authentication, after
  its answer.
- Unsupported requests: ApiVersions of an unknown version gets ``api_versions_fallback``; any
  other unknown API key or version, a header or body that does not decode, or a handler that
  raises, closes that connection only (as Kafka does). A client that disconnects mid-request
  only loses its own connection; its queued requests are dropped. A client that shuts its side
  (a FIN) has what it sent answered, then the connection closes; a Fetch parked in a long poll
  then is answered at once with what the log has (``RequestContext.client_closed``), so a client
  that sends a long poll and closes does not hold its socket for ``max_wait_ms``.
- Idle connections: one that has neither received nor sent a byte for
  ``connections.max.idle.ms`` (Kafka's 10 minutes; 0 or less: never), and has no request being
  handled, is closed by ``KafkaServer``'s reaper, as Kafka's Selector does: a client that went
  away without a FIN, or stalled mid-frame, does not keep its buffers for ever.
- Writes: ``ResponseWriter`` (response_writer.py) sends each response in order, Fetch data
  with sendfile from pinned segment files (copied through the encryption on a TLS listener,
  tls.py). A response that cannot be sent (a segment deleted under it) closes the
  connection: the client fetches again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import struct
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers import Handler
from tiered_mq.broker.listener import Listener
from tiered_mq.broker.metrics import ApiMetrics
from tiered_mq.broker.principal_mapping import PrincipalMapper
from tiered_mq.broker.response_writer import CloseConnection, ResponseWriter
from tiered_mq.broker.sasl import SaslConfig, SaslSession
from tiered_mq.broker.tls import tls_principal
from tiered_mq.errors import KafkaError, UnsupportedVersionError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.protocol.codec import (
    Support,
    api_versions_fallback,
    classify,
    decode_request,
    encode_response,
)
from tiered_mq.protocol.error_counts import error_counter
from tiered_mq.protocol.header import RequestHeader, decode_request_header

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker

log = logging.getLogger(__name__)

RECV_BUFFER: Final = 256 * 1024  # the most a connection's receive buffer grows to
RECV_BUFFER_INITIAL: Final = 16 * 1024  # what it starts at
MAX_QUEUED_BYTES: Final = 64 * 1024 * 1024
MAX_QUEUED_REQUESTS: Final = 1024
FRAME_OVERHEAD: Final = 128  # what a queued frame costs beyond its bytes (object, deque slot)
FRAME_CHUNK: Final = 4 * 1024 * 1024  # a bigger frame is received in pieces of this size
TLS_WRITE_BUFFER: Final = 1024 * 1024  # bytes a TLS transport buffers before pause_writing
# what a connection of a SASL listener may send before it has authenticated (sasl.py)
_BEFORE_AUTH: Final = frozenset(
    {ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE}
)
_SIZE = struct.Struct(">i")


class KafkaConnection(asyncio.BufferedProtocol):
    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self.broker = server.broker
        self.max_request = server.max_request_bytes
        if server.sasl_config is not None:  # raised to the above once authenticated
            self.max_request = min(self.max_request, server.sasl_max_receive_bytes)
        self.transport: asyncio.Transport | None = None
        self.peer = ""
        self._recv = bytearray(RECV_BUFFER_INITIAL)
        self._start = 0
        self._end = 0
        self._recv_full = False  # the last read filled the receive buffer to its end
        self._frame: bytearray | None = None  # the piece of a big frame being filled
        self._filled = 0  # bytes of it filled
        self._pieces: list[bytearray] = []  # the filled pieces before it
        self._missing = 0  # bytes of the frame not yet received
        self._queue: deque[tuple[bytearray, float]] = deque()  # (frame, when it was read)
        self._queued_bytes = 0
        self._wakeup: asyncio.Future[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self._read_paused = False
        self._writer: ResponseWriter | None = None
        self._eof = False
        self._client_closed: asyncio.Future[None] | None = None  # done at EOF or loss
        self._tls = False
        self._tls_principal: str | None = None  # User:<DN> of a client certificate
        self._sasl = SaslSession(server.sasl_config) if server.sasl_config is not None else None
        self.last_active = time.monotonic()  # the last byte received or response sent
        self.handling = False  # a request is being handled or answered
        self._timed: ApiMetrics | None = None  # where the request being handled is timed

    # connection lifecycle -----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCPTransport is not an asyncio.Transport subclass but has its methods
        self.transport = transport  # type: ignore[assignment]
        assert self.transport is not None
        self._tls = self.transport.get_extra_info("ssl_object") is not None
        unnamed: str | None = None  # why a client certificate gives no principal
        if self._tls:  # copies only: ordinary flow control
            self.transport.set_write_buffer_limits(high=TLS_WRITE_BUFFER)
            try:
                peercert = self.transport.get_extra_info("peercert")
                self._tls_principal = tls_principal(peercert, self.server.principal_mapper)
            except ValueError as e:  # no principal: the connection closes, as in Kafka
                unnamed = str(e)
        else:  # sendfile after queued bytes: see response_writer.py
            self.transport.set_write_buffer_limits(high=0, low=0)
        self._writer = ResponseWriter(
            transport, self.broker.metrics.bytes_out, zero_copy=not self._tls
        )
        self._set_socket_buffers()
        peer = self.transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.server.connections.add(self)
        self.broker.metrics.connections.inc()
        self._client_closed = asyncio.get_running_loop().create_future()
        self._worker = asyncio.get_running_loop().create_task(
            self._process_requests(), name=f"kafka-connection-{self.peer}"
        )
        if unnamed is not None:
            self.close(unnamed)

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
        self._wake(self._wakeup)
        self._wake(self._client_closed)
        if self._writer is not None:
            self._writer.close()

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
            if self._filled == len(self._frame):  # a full piece: start the next
                self._pieces.append(self._frame)
                self._frame, self._filled = bytearray(min(self._missing, FRAME_CHUNK)), 0
            return memoryview(self._frame)[self._filled :]
        if self._recv_full and len(self._recv) < RECV_BUFFER:
            self._grow_recv()
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._recv):
            n = self._end - self._start
            self._recv[:n] = self._recv[self._start : self._end]
            self._start, self._end = 0, n
        return memoryview(self._recv)[self._end :]

    def _grow_recv(self) -> None:
        """Replace the receive buffer by one four times as big (at most ``RECV_BUFFER``),
        keeping its unparsed bytes."""
        n = self._end - self._start
        grown = bytearray(min(len(self._recv) * 4, RECV_BUFFER))
        grown[:n] = self._recv[self._start : self._end]
        self._recv, self._start, self._end = grown, 0, n
        self._recv_full = False

    def buffer_updated(self, nbytes: int) -> None:
        now = self.last_active = time.monotonic()  # also when the frames completed were read
        if self._frame is not None:
            self._filled += nbytes
            self._missing -= nbytes
            if self._missing == 0:
                frame, self._frame = self._frame, None
                if self._pieces:
                    frame = bytearray().join([*self._pieces, frame])
                    self._pieces = []
                self._enqueue(frame, now)
            return
        self._end += nbytes
        recv = self._recv
        self._recv_full = self._end == len(recv)
        while self._end - self._start >= 4:
            (size,) = _SIZE.unpack_from(recv, self._start)
            if size < 0 or size > self.max_request:
                self._refuse(size)
                return
            begin = self._start + 4
            avail = self._end - begin
            if avail >= size:
                self._start = begin + size
                self._enqueue(recv[begin : begin + size], now)
            else:
                frame = bytearray(min(size, FRAME_CHUNK))  # avail < size, avail <= RECV_BUFFER
                frame[:avail] = recv[begin : self._end]
                self._frame, self._filled, self._missing = frame, avail, size - avail
                self._start = self._end = 0
                return

    def eof_received(self) -> bool | None:
        """The client shut down its side: answer what it already sent, then close (over TLS
        the transport closes: TLS has no half-close)."""
        self._eof = True
        self._wake(self._wakeup)
        self._wake(self._client_closed)  # a parked Fetch answers now (context.py)
        return not self._tls  # True: keep the transport open for our responses

    def _refuse(self, size: int) -> None:
        self._start = self._end = 0
        self.close(
            f"request of {size} bytes refused: the limit is {self.max_request} "
            "(socket.request.max.bytes; sasl.server.max.receive.size before SASL authentication)"
        )

    def _enqueue(self, frame: bytearray, received: float) -> None:
        if self._closed:
            return
        self._queue.append((frame, received))
        self._queued_bytes += len(frame) + FRAME_OVERHEAD
        full = self._queued_bytes > MAX_QUEUED_BYTES or len(self._queue) > MAX_QUEUED_REQUESTS
        if full and not self._read_paused:
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
                frame, received = self._queue.popleft()
                self._queued_bytes -= len(frame) + FRAME_OVERHEAD
                if (
                    self._read_paused
                    and self._queued_bytes < MAX_QUEUED_BYTES // 2
                    and len(self._queue) < MAX_QUEUED_REQUESTS // 2
                ):
                    self._read_paused = False
                    if self.transport is not None:
                        self.transport.resume_reading()
                self.handling = True
                self._timed = None  # set by _dispatch
                dequeued, sending = time.monotonic(), 0.0  # sending: 0.0 until a send starts
                try:
                    chunks = await self._handle(frame)
                    if chunks and not self._closed:
                        assert self._writer is not None
                        sending = time.monotonic()
                        await self._writer.write(chunks)
                finally:
                    self.handling = False
                    done = self.last_active = time.monotonic()
                    if self._timed is not None:
                        self._timed.timed(received, dequeued, sending or done, done)
                if self._sasl is not None:
                    if self._sasl.failed:
                        raise CloseConnection("SASL authentication failed")  # after its answer
                    if self._sasl.authenticated:
                        self.max_request = self.server.max_request_bytes
        except CloseConnection as e:
            self.close(str(e))
        except asyncio.CancelledError:
            raise
        except (ConnectionError, OSError) as e:
            self.close(f"write failed: {e}")
        except Exception:
            log.exception("connection from %s failed", self.peer)
            self.close()

    async def _handle(self, frame: bytearray) -> list[Any] | None:
        sasl = self._sasl
        if sasl is not None and sasl.raw_tokens and not sasl.authenticated:
            return [self._raw_sasl_token(sasl, bytes(frame))]
        view = memoryview(frame)
        try:
            header, pos = decode_request_header(view)
        except KafkaError as e:
            raise CloseConnection(f"undecodable request header: {e}") from None
        support = classify(header)
        if support is not Support.SUPPORTED:
            if header.api_key == ApiKey.API_VERSIONS:
                api = self.broker.metrics.for_api("api_versions")
                api.requests.inc()  # answered, as Kafka answers it, and counted as it counts it
                codes = api.codes
                unsupported = UnsupportedVersionError.errno
                codes[unsupported] = codes.get(unsupported, 0) + 1
                return [api_versions_fallback(header.correlation_id)]
            raise CloseConnection(
                f"unsupported request: api key {header.api_key} v{header.api_version} "
                f"({support.value})"
            )
        handler = self.server.handlers.get(header.api_key)
        if handler is None:
            raise CloseConnection(f"no handler for api key {header.api_key}")
        if sasl is not None and not sasl.authenticated and header.api_key not in _BEFORE_AUTH:
            raise CloseConnection(f"{handler.name} before SASL authentication")
        try:
            request = decode_request(header, view[pos:])
        except KafkaError as e:
            raise CloseConnection(
                f"undecodable {handler.name} v{header.api_version}: {e}"
            ) from None
        return await self._dispatch(handler, header, request)

    @staticmethod
    def _raw_sasl_token(sasl: SaslSession, token: bytes) -> bytes:
        """A bare token after SaslHandshake v0: the answer is a bare size-prefixed token; a
        failure closes the connection (this exchange has no way to say why)."""
        try:
            answer = sasl.authenticate(token)
        except KafkaError as e:
            raise CloseConnection(f"SASL authentication failed: {e}") from None
        return _SIZE.pack(len(answer)) + answer

    async def _dispatch(
        self, handler: Handler, header: RequestHeader, request: dict[str, Any]
    ) -> list[Any] | None:
        api = self._timed = self.broker.metrics.for_api(handler.name)
        ctx = RequestContext(
            header,
            self.broker,
            self.peer,
            self._sasl,
            self.server.listener,
            self._tls_principal,
            self._client_closed,
        )
        try:
            response = await handler.handle(ctx, request)
        except asyncio.CancelledError:
            raise
        except CloseConnection as e:  # the handler's answer is the disconnect (acks=0 Produce)
            if e.response is not None:  # its error codes count, as Kafka's closeConnection
                error_counter(header.api_key, header.api_version)(e.response, api.codes)
            raise
        except Exception as e:
            api.errors.inc()
            log.exception("%s v%d from %s failed", handler.name, header.api_version, self.peer)
            raise CloseConnection(f"{handler.name} handler failed: {e!r}") from None
        finally:
            api.requests.inc()
        if response is None:
            return None
        error_counter(header.api_key, header.api_version)(response, api.codes)
        return encode_response(header, response)

    # writing (response_writer.py) -------------------------------------------------------------
    def pause_writing(self) -> None:
        if self._writer is not None:
            self._writer.pause()

    def resume_writing(self) -> None:
        if self._writer is not None:
            self._writer.resume()


class KafkaServer:
    """Accepts connections on one listener of a broker; ``handlers`` maps api key -> handler
    module."""

    def __init__(self, broker: Broker, handlers: dict[int, Handler], listener: Listener) -> None:
        self.broker = broker
        self.handlers = handlers
        self.listener = listener
        self.max_request_bytes = broker.config.get_int("socket.request.max.bytes")
        self.sasl_max_receive_bytes = broker.config.get_int("sasl.server.max.receive.size")
        self.connections: set[KafkaConnection] = set()
        self.sasl_config: SaslConfig | None = None
        self.principal_mapper: PrincipalMapper | None = None  # TLS listeners (start)
        self._server: asyncio.base_events.Server | None = None
        self.max_idle_s = broker.config.get_int("connections.max.idle.ms") / 1000
        self._reaper: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.listener.port

    async def start(self, tls: ssl.SSLContext | None = None, sasl: SaslConfig | None = None) -> int:
        """Listen on the listener's host:port (empty host: every interface), over TLS with
        ``tls``; with ``sasl`` (a SASL listener's settings) every connection authenticates
        first (sasl.py). Returns the bound port (the listener's from then on)."""
        self.sasl_config = sasl
        if tls is not None and sasl is None:  # SSL: the certificate names the principal
            self.principal_mapper = PrincipalMapper.from_config(
                self.broker.config, self.listener.name
            )
        loop = asyncio.get_running_loop()
        if self.listener.host == "::":  # every address, IPv4 as well, as Java binds it
            self._server = await loop.create_server(
                lambda: KafkaConnection(self),
                sock=dual_stack_socket(self.listener.port),
                backlog=1024,
                ssl=tls,
            )
        else:
            self._server = await loop.create_server(
                lambda: KafkaConnection(self),
                self.listener.host or None,
                self.listener.port,
                reuse_address=True,
                backlog=1024,
                ssl=tls,
            )
        sockets = self._server.sockets
        if sockets:
            self.listener = self.listener.bound(int(sockets[0].getsockname()[1]))
        if self.max_idle_s > 0:
            self._reaper = loop.create_task(self._close_idle(), name="kafka-idle-connections")
        return self.listener.port

    async def _close_idle(self) -> None:
        """Every tenth of ``connections.max.idle.ms`` (at most 30 s), close the connections idle
        longer than that."""
        while True:
            await asyncio.sleep(min(self.max_idle_s / 10, 30.0))
            oldest = time.monotonic() - self.max_idle_s
            for conn in list(self.connections):
                if not conn.handling and conn.last_active < oldest:
                    log.info(
                        "closing connection from %s: idle for more than connections.max.idle.ms",
                        conn.peer,
                    )
                    conn.close()

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
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


def dual_stack_socket(port: int) -> socket.socket:
    """A listening TCP socket on ``[::]:port`` that takes IPv4 connections too.

    asyncio binds ``::`` with ``IPV6_V6ONLY`` set, so ``listeners=PLAINTEXT://[::]:9092`` would
    refuse every IPv4 client; Java (and so Kafka) binds the wildcard dual-stack."""
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
