"""A segment closed while its bytes wait for the socket: the fetch still sends the segment's
bytes (server.py pins every region's file with a dup before the first await), never those of
whatever file the kernel gave the closed descriptor's number to."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
from pathlib import Path

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.broker.broker import Broker
from tiered_mq.protocol.codec import decode_response, encode_request
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition


def _fetch_frame(topic: str) -> bytes:
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 64 << 20,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 64 << 20}
                ],
            }
        ],
    }
    return encode_request(FETCH, 4, 7, "pin-test", body)  # with its size prefix


async def test_fetch_sends_the_closed_segments_bytes(
    broker: Broker, client: Client, tmp_path: Path
) -> None:
    await create(client, "pin")
    expected = []
    for b in range(8):
        values = [bytes([b, i % 256]) * 2000 for i in range(200)]  # ~800 KB per batch
        expected.extend(values)
        await client.call(PRODUCE, 8, produce_body("pin", batch(values)))
    segment = broker.replica_manager.get_partition(TopicPartition("pin", 0)).log.segments()[0]

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the response cannot all go
    sock.connect(("127.0.0.1", broker.port))
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, _fetch_frame("pin"))
    for _ in range(500):  # until the server waits for the socket mid-response
        if any(c._writer and c._writer.waiting_for_socket for c in broker.server.connections):
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the fetch response never waited for the socket")

    # local retention with file.delete.delay.ms=0: the segment file is closed, and the next
    # file opened gets its descriptor's number
    number = segment.file.fileno()
    segment.file.close()
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"\xee" * (64 << 20))
    _open_as(decoy, os.O_RDONLY, number)
    try:
        head = await _recv_exact(loop, sock, 4)
        (size,) = struct.unpack(">i", head)
        data = await _recv_exact(loop, sock, size)
    finally:
        sock.close()
        # give the segment its file back under the same number (the broker closes it later)
        _open_as(segment.log_path, os.O_RDWR, number)
        segment.file = open(number, "r+b", buffering=0)  # noqa: SIM115
    response = decode_response(FETCH, 4, data)
    records = response["responses"][0]["partitions"][0]["records"]
    got = [r.value for _, rs in decode_batches(records) for r in rs]
    assert got == expected


async def _recv_exact(loop: asyncio.AbstractEventLoop, sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = await asyncio.wait_for(loop.sock_recv(sock, n - len(buf)), 10)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


def _open_as(path: Path, flags: int, number: int) -> None:
    """Open ``path`` under the descriptor number ``number`` (free or taken)."""
    fd = os.open(path, flags)
    if fd != number:
        os.dup2(fd, number)
        os.close(fd)
