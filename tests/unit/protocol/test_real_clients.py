"""Real clients against a codec-only server: ApiVersions (v0, v3, and v4 via the fallback) and
Metadata must satisfy librdkafka (kcat 2.0.2 and confluent-kafka), kafka-python and aiokafka.

The server here answers only ApiVersions and Metadata, straight from the codec; it binds port 0.
"""

from __future__ import annotations

import asyncio
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tiered_mq.protocol import codec
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey, advertised
from tiered_mq.protocol.codec import Support, classify
from tiered_mq.protocol.header import decode_request_header


class MiniServer:
    def __init__(self) -> None:
        self.port = 0
        self.seen: list[tuple[int, int]] = []
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _body(self, api_key: int) -> dict[str, Any] | None:
        if api_key == ApiKey.API_VERSIONS:
            return {"api_keys": advertised(SUPPORTED)}
        if api_key == ApiKey.METADATA:
            partition = {
                "partition_index": 0,
                "leader_id": 1,
                "replica_nodes": [1],
                "isr_nodes": [1],
            }
            return {
                "brokers": [{"node_id": 1, "host": "127.0.0.1", "port": self.port}],
                "cluster_id": "mini",
                "controller_id": 1,
                "topics": [{"name": "t", "partitions": [partition]}],
            }
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                (size,) = struct.unpack(">i", await reader.readexactly(4))
                frame = memoryview(await reader.readexactly(size))
                header, pos = decode_request_header(frame)
                self.seen.append((header.api_key, header.api_version))
                if classify(header) is not Support.SUPPORTED:
                    if header.api_key != ApiKey.API_VERSIONS:
                        break
                    writer.write(codec.api_versions_fallback(header.correlation_id))
                    continue
                codec.decode_request(header, frame[pos:])
                body = self._body(header.api_key)
                if body is None:
                    break
                writer.writelines(bytes(c) for c in codec.encode_response(header, body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


@pytest.fixture
def server() -> Iterator[MiniServer]:
    s = MiniServer()
    s.start()
    yield s
    s.stop()


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat not installed")
def test_kcat_lists_metadata(server: MiniServer) -> None:
    out = subprocess.run(
        ["kcat", "-b", f"127.0.0.1:{server.port}", "-L", "-m", "5"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert 'topic "t" with 1 partitions' in out.stdout
    assert (ApiKey.API_VERSIONS, 3) in server.seen


def test_confluent_kafka_lists_topics(server: MiniServer) -> None:
    admin = pytest.importorskip("confluent_kafka.admin")
    client = admin.AdminClient({"bootstrap.servers": f"127.0.0.1:{server.port}"})
    assert set(client.list_topics(timeout=10).topics) == {"t"}


def test_kafka_python_negotiates_through_the_fallback(server: MiniServer) -> None:
    kafka = pytest.importorskip("kafka")
    consumer = kafka.KafkaConsumer(bootstrap_servers=f"127.0.0.1:{server.port}")
    try:
        assert consumer.topics() == {"t"}
    finally:
        consumer.close()
    versions = [v for k, v in server.seen if k == ApiKey.API_VERSIONS]
    assert versions[0] > SUPPORTED[ApiKey.API_VERSIONS][1]  # asked too high, was told the max


async def test_aiokafka_uses_api_versions_v0(server: MiniServer) -> None:
    aiokafka = pytest.importorskip("aiokafka")
    consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=f"127.0.0.1:{server.port}")
    await consumer.start()
    try:
        assert await consumer.topics() == {"t"}
    finally:
        await consumer.stop()
