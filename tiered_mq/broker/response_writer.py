"""Writing one connection's responses: bytes to the transport, Fetch data with sendfile.

- Bytes chunks go to the transport; ``FileRegion`` chunks (Fetch data) up to
  ``INLINE_REGION_MAX`` are read and written with the rest of the response (one syscall instead
  of a write plus a sendfile); bigger ones are sent with ``os.sendfile`` from the segment file
  to the socket once the transport's buffer is empty (so bytes stay in order).
- uvloop transports have no ``loop.sendfile`` and own their fd's registration, so the writer
  polls a ``dup`` of the socket fd for writability when the socket buffer is full: the whole
  region goes zero-copy. The dup is closed by ``close`` (else it would keep the socket open).
- The transport's write buffer high-water mark is 0 (the connection sets it), so
  ``pause_writing`` fires whenever bytes wait in user space and the writer awaits
  ``resume_writing`` before the next region.
- TLS (``zero_copy=False``): sendfile would put plaintext on the socket under the
  encryption, so every region is read (``PREAD_CHUNK`` at a time) and written to the
  transport, which encrypts it.
- Pinning: before its first await, a response dups the fd of every segment file it sends from
  and reads only through the dups (closed after the write). Local retention may close a segment
  while the response waits for the socket; the kernel then reuses the closed fd's number, and
  reading through it would send another file's bytes. A segment closed before the response
  starts (a retention during a multi-partition fetch) raises CloseConnection: the client
  fetches again.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Final, Protocol

from tiered_mq.record.file_records import FileRegion

PREAD_CHUNK: Final = 1024 * 1024
# regions up to this size are read and written with the rest of the response (one syscall
# instead of a write plus a sendfile): cheaper for the small fetches of a caught-up consumer
INLINE_REGION_MAX: Final = 16 * 1024
JOIN_MAX: Final = 64 * 1024  # responses up to this size are joined into one write


class CloseConnection(Exception):
    """Close this connection (after logging why). ``response``: the answer the request would
    have had, when there is one to count in the metrics (a failed acks=0 Produce)."""

    def __init__(self, reason: str, *, response: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.response = response


class ByteCounter(Protocol):
    def inc(self, amount: float = 1) -> None: ...


class ResponseWriter:
    """Writes the responses of one connection to its transport, in order."""

    def __init__(self, transport: Any, bytes_out: ByteCounter, *, zero_copy: bool = True) -> None:
        self._transport = transport
        self._bytes_out = bytes_out
        self._write_ready: asyncio.Future[None] | None = None
        self._dup_fd: int | None = None if zero_copy else -1  # -1: no sendfile
        self._writable: asyncio.Future[None] | None = None
        self._closed = False

    @property
    def waiting_for_socket(self) -> bool:
        """Whether a sendfile waits for the socket to take more bytes (mid-response)."""
        return self._writable is not None

    # flow control (called by the protocol) -----------------------------------------------------
    def pause(self) -> None:
        if self._write_ready is None or self._write_ready.done():
            self._write_ready = asyncio.get_running_loop().create_future()

    def resume(self) -> None:
        _wake(self._write_ready)

    def close(self) -> None:
        """The connection is gone: wake a waiting write (it raises) and close the socket dup."""
        self._closed = True
        _wake(self._write_ready)
        if self._dup_fd is not None and self._dup_fd >= 0:
            if self._writable is not None:
                asyncio.get_running_loop().remove_writer(self._dup_fd)
                _wake(self._writable)
            os.close(self._dup_fd)
            self._dup_fd = -1

    # writing ------------------------------------------------------------------------------------
    async def write(self, chunks: list[Any]) -> None:
        """Send one response's chunks (bytes and FileRegions), pinning its segment files."""
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
        transport = self._transport
        pending: list[Any] = []
        for c in chunks:
            if isinstance(c, FileRegion) and c.length <= INLINE_REGION_MAX:
                data = os.pread(pinned[id(c.file)], c.length, c.position)
                if len(data) != c.length:
                    raise CloseConnection(
                        f"segment file shrank under a fetch at position {c.position}"
                    )
                pending.append(data)
                self._bytes_out.inc(c.length)
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

    async def _drain(self) -> None:
        fut = self._write_ready
        if fut is not None and not fut.done():
            await fut
        if self._closed:
            raise ConnectionResetError("connection closed")

    def _sendfile_fd(self) -> int:
        """A dup of the socket's fd (-1 if none): ours to poll for writability, since the
        transport owns the original's registration in the event loop."""
        if self._dup_fd is None:
            sock = self._transport.get_extra_info("socket")
            self._dup_fd = os.dup(sock.fileno()) if sock is not None else -1
        return self._dup_fd

    async def _wait_writable(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._writable = fut
        loop.add_writer(fd, _wake, fut)
        try:
            await fut
        finally:
            self._writable = None
            if not self._closed:
                loop.remove_writer(fd)
        if self._closed:
            raise ConnectionResetError("connection closed")

    async def _send_region(self, region: FileRegion, in_fd: int) -> None:
        """Send ``region`` from ``in_fd`` (the region's file, pinned by ``write``)."""
        transport = self._transport
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
                    raise CloseConnection(f"segment file shrank under a fetch at position {offset}")
                offset += sent
                remaining -= sent
                continue
            # no socket fd (TLS, or not a TCP transport): queue a copy on the transport
            data = os.pread(in_fd, min(remaining, PREAD_CHUNK), offset)
            if not data:
                raise CloseConnection(f"segment file shrank under a fetch at position {offset}")
            transport.write(data)
            offset += len(data)
            remaining -= len(data)
        self._bytes_out.inc(region.length)


def _wake(fut: asyncio.Future[None] | None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(None)


def _pin(region: FileRegion) -> int:
    """A dup of the region's file descriptor; CloseConnection when the segment is already
    closed (a retention that ran while the fetch was being answered: the client fetches
    again)."""
    try:
        return os.dup(region.file.fileno())
    except ValueError:
        raise CloseConnection(
            "segment deleted under a fetch response (client will fetch again)"
        ) from None
