"""JoinGroup v0 and v1, as Sarama before 1.41 sends them (it does not read ApiVersions).

The frames are built and parsed by hand (not with the project's codec), so a mistake in the
declarations cannot hide itself. Without v0-1 in the supported range the broker closes the
connection and Sarama's consumer group fails with EOF.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.unit.broker.conftest import start_broker
from tiered_mq.broker.broker import Broker

JOIN_GROUP = 11


def _str(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def join_request(version: int, corr: int, group: str, session_ms: int, rebalance_ms: int) -> bytes:
    header = struct.pack(">hhi", JOIN_GROUP, version, corr) + _str("sarama")
    body = _str(group) + struct.pack(">i", session_ms)
    if version >= 1:
        body += struct.pack(">i", rebalance_ms)
    body += _str("") + _str("consumer")  # no member id yet; protocol type
    body += struct.pack(">i", 1) + _str("range") + struct.pack(">i", 4) + b"meta"
    frame = header + body
    return struct.pack(">i", len(frame)) + frame


class _Parser:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(value)

    def string(self) -> str:
        n = self.take(">h")
        s = self.data[self.pos : self.pos + n].decode()
        self.pos += n
        return s

    def bytes_(self) -> bytes:
        n = self.take(">i")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b


@pytest.fixture
async def fast_broker(tmp_path: Path) -> AsyncIterator[Broker]:
    b = await start_broker(tmp_path / "data", **{"group.initial.rebalance.delay.ms": "0"})
    try:
        yield b
    finally:
        await b.close()


@pytest.mark.parametrize("version", [0, 1])
async def test_join_group_v0_v1_answered_in_their_format(fast_broker: Broker, version: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", fast_broker.port)
    try:
        writer.write(join_request(version, 77, f"g{version}", 6000, 45_000))
        await writer.drain()
        (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 10))
        p = _Parser(await reader.readexactly(size))
        assert p.take(">i") == 77  # response header v0: correlation id only
        # v0-1 have no throttle_time_ms: the body starts with the error code
        assert p.take(">h") == 0
        assert p.take(">i") == 1  # generation
        assert p.string() == "range"
        leader = p.string()
        member = p.string()
        assert member.startswith("sarama-") and leader == member
        assert p.take(">i") == 1
        assert (p.string(), p.bytes_()) == (member, b"meta")
        assert p.pos == size  # nothing left over
    finally:
        writer.close()
    coordinator = fast_broker.group_coordinator
    assert coordinator is not None
    joined = coordinator.groups[f"g{version}"].members[member]
    # v0 has no rebalance timeout: the session timeout stands in for it
    assert joined.rebalance_timeout_ms == (6000 if version == 0 else 45_000)
