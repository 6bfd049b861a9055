"""In-process broker fixtures: a Broker on port 0 in the test's event loop, and a tiny client."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.protocol.codec import decode_response, encode_request


class Client:
    """One connection speaking the Kafka protocol through the project's codec."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._corr = itertools.count(1)

    @classmethod
    async def connect(cls, port: int) -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def send(self, api_key: int, version: int, body: dict[str, Any]) -> int:
        corr = next(self._corr)
        self.writer.write(encode_request(api_key, version, corr, "unit", body))
        await self.writer.drain()
        return corr

    async def receive(self, api_key: int, version: int) -> tuple[int, dict[str, Any]]:
        (size,) = struct.unpack(">i", await self.reader.readexactly(4))
        payload = await self.reader.readexactly(size)
        (corr,) = struct.unpack_from(">i", payload)
        return corr, decode_response(api_key, version, payload)

    async def call(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        corr = await self.send(api_key, version, body)
        got, response = await asyncio.wait_for(self.receive(api_key, version), 10)
        assert got == corr
        return response

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except ConnectionError:
            pass


STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# ACLs on; a resource without any ACL stays open to everyone (Kafka's opt-in)
ACLS_ON = {"authorizer.class.name": STANDARD_AUTHORIZER, "allow.everyone.if.no.acl.found": "true"}


async def start_broker(data_dir: Path, cold_url: str | None = None, **overrides: str) -> Broker:
    # one offsets partition keeps start and close fast
    config = BrokerConfig(
        data_dir,
        port=0,
        overrides={"offsets.topic.num.partitions": "1", **overrides},
        cold_url=cold_url,
    )
    broker = Broker(config)
    await broker.start()
    return broker


@contextlib.asynccontextmanager
async def serving(data_dir: Path, **overrides: str) -> AsyncIterator[tuple[Broker, Client]]:
    """A broker started with ``overrides`` and one client connected to it; both closed after."""
    broker = await start_broker(data_dir, **overrides)
    try:
        client = await Client.connect(broker.port)
        try:
            yield broker, client
        finally:
            await client.close()
    finally:
        await broker.close()


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    b = await start_broker(tmp_path / "data")
    try:
        yield b
    finally:
        await b.close()


@pytest.fixture
async def client(broker: Broker) -> AsyncIterator[Client]:
    c = await Client.connect(broker.port)
    try:
        yield c
    finally:
        await c.close()
