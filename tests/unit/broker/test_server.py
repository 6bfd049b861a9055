"""The TCP front end: framing limits, unsupported requests, garbage, pipelining."""

from __future__ import annotations

import asyncio
import struct

from tests.unit.broker.conftest import Client
from tiered_mq.broker.broker import Broker
from tiered_mq.protocol.codec import encode_request


async def _closed_promptly(reader: asyncio.StreamReader) -> bool:
    try:
        data = await asyncio.wait_for(reader.read(100), 3)
    except (ConnectionError, TimeoutError):
        return True
    return data == b""


async def _still_serves(broker: Broker) -> None:
    c = await Client.connect(broker.port)
    r = await c.call(3, 8, {"topics": None})
    assert r["brokers"]
    await c.close()


async def test_oversized_frame_refused_without_body(broker: Broker) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
    writer.write(struct.pack(">i", 104857600 + 1))
    await writer.drain()
    assert await _closed_promptly(reader)
    writer.close()
    await _still_serves(broker)


async def test_negative_size_and_garbage_close_only_that_connection(broker: Broker) -> None:
    for junk in (struct.pack(">i", -5), struct.pack(">i", 8) + b"\xff" * 8):
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        writer.write(junk)
        await writer.drain()
        assert await _closed_promptly(reader)
        writer.close()
    await _still_serves(broker)


async def test_unknown_api_key_closes_and_unknown_api_versions_falls_back(broker: Broker) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
    header = struct.pack(">hhih", 999, 0, 7, -1)
    writer.write(struct.pack(">i", len(header)) + header)
    await writer.drain()
    assert await _closed_promptly(reader)
    writer.close()

    reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
    header = struct.pack(">hhih", 18, 99, 42, -1) + b"\x00"
    writer.write(struct.pack(">i", len(header)) + header)
    await writer.drain()
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    body = await reader.readexactly(size)
    corr, err, n, key, lo, hi = struct.unpack(">ihihhh", body)
    assert (corr, err, n, key, lo) == (42, 35, 1, 18, 0) and hi >= 2
    writer.close()
    await _still_serves(broker)


async def test_disconnect_mid_request(broker: Broker) -> None:
    frame = encode_request(3, 8, 1, "x", {"topics": None})
    _reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
    writer.write(frame[: len(frame) // 2])
    await writer.drain()
    writer.close()
    await asyncio.sleep(0.05)
    await _still_serves(broker)


async def test_pipelined_requests_answered_in_order(broker: Broker) -> None:
    c = await Client.connect(broker.port)
    frames = b"".join(
        encode_request(3 if i % 2 else 18, 8 if i % 2 else 2, i, "x", {"topics": None})
        for i in range(1, 41)
    )
    c.writer.write(frames)
    await c.writer.drain()
    seen = []
    for i in range(1, 41):
        corr, _ = await c.receive(3 if i % 2 else 18, 8 if i % 2 else 2)
        seen.append(corr)
    assert seen == list(range(1, 41))
    await c.close()


async def test_half_closed_client_still_gets_its_answers(broker: Broker) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
    writer.write(b"".join(encode_request(3, 8, i, "x", {"topics": None}) for i in (1, 2)))
    writer.write_eof()
    seen = []
    for _ in range(2):
        (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 5))
        body = await reader.readexactly(size)
        seen.append(struct.unpack_from(">i", body)[0])
    assert seen == [1, 2]
    assert await _closed_promptly(reader)
    writer.close()
